/**
 * CRC-16 as EVA-DTS uses it (6.1.1, sections 2 and 4): polynomial x^16 + x^15 + x^2 + 1, bits
 * taken least significant first (0xA001 reflected), initial value 0, no final XOR: the CRC-16/ARC
 * of the catalogues. DEX/UCS blocks carry it low byte first; the audit file's G85 record carries it
 * as four hex digits. `seed` continues a CRC over data given in pieces.
 */
const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xa001 : c >>> 1;
    table[n] = c;
  }
  return table;
})();

export function crc16(bytes: Uint8Array, seed = 0): number {
  let crc = seed & 0xffff;
  for (const byte of bytes) crc = (crc >>> 8) ^ TABLE[(crc ^ byte) & 0xff]!;
  return crc;
}
