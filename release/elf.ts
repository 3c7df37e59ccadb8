/**
 * Just enough of the ELF header to tell which machine a file is for: the identification bytes,
 * the class (32/64 bit), the byte order and e_machine. Pure: works on the first bytes of a file.
 */

export interface ElfIdentity {
  elfClass: 32 | 64;
  littleEndian: boolean;
  /** e_type: 1 relocatable, 2 executable, 3 shared object (also PIE executables and .node). */
  type: number;
  machine: number;
}

/** Bytes needed to read the fields above (e_machine ends at offset 20). */
export const ELF_HEADER_BYTES = 20;

const MAGIC = [0x7f, 0x45, 0x4c, 0x46];

export function isElf(head: Uint8Array): boolean {
  return head.length >= 4 && MAGIC.every((b, i) => head[i] === b);
}

/**
 * The identity of an ELF file from its first bytes; null when it is not ELF. Throws on a truncated or malformed header.
 */
export function readElfIdentity(head: Uint8Array): ElfIdentity | null {
  if (!isElf(head)) return null;
  if (head.length < ELF_HEADER_BYTES)
    throw new Error(`ELF header truncated (${head.length} of ${ELF_HEADER_BYTES} bytes)`);
  const cls = head[4];
  const data = head[5];
  if (cls !== 1 && cls !== 2) throw new Error(`ELF class byte ${String(cls)} is neither 1 (32-bit) nor 2 (64-bit)`);
  if (data !== 1 && data !== 2)
    throw new Error(`ELF data byte ${String(data)} is neither 1 (little-endian) nor 2 (big-endian)`);
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const littleEndian = data === 1;
  return {
    elfClass: cls === 1 ? 32 : 64,
    littleEndian,
    type: view.getUint16(16, littleEndian),
    machine: view.getUint16(18, littleEndian),
  };
}

const MACHINE_NAMES: Record<number, string> = { 3: 'i386', 40: 'arm', 62: 'x86-64', 183: 'aarch64' };

export function machineName(machine: number): string {
  return MACHINE_NAMES[machine] ?? `machine ${machine}`;
}
