/**
 * G85 over the lines as transmitted. EVA-DTS 6.1.1 section 2.4.3 defines the CRC over the bytes
 * from the S of ST to the CR LF before G85, as the VMC sent them. A file saved by a tool that
 * rewrote the line ends (LF only on Linux, a lone CR) no longer holds those bytes; every line end is
 * put back as CR LF for the CRC, so such a file checks as it was sent (docs/dex.md, "The check").
 */
import { crc16 } from '../crc16.js';

const CR = 0x0d;
const LF = 0x0a;
const CRLF = Uint8Array.of(CR, LF);

/** The line ends a file uses: `none` for a file of one line without an end. */
export type LineEnds = 'crlf' | 'lf' | 'cr' | 'mixed' | 'none';

/** Over which bytes the G85 was computed: the file's own (all CR LF), or with CR LF put back. */
export type G85Over = 'stored-crlf' | 'crlf-restored';

export function lineEndsOf(bytes: Uint8Array): LineEnds {
  const seen = new Set<'crlf' | 'lf' | 'cr'>();
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === CR) {
      if (bytes[i + 1] === LF) {
        seen.add('crlf');
        i++;
      } else seen.add('cr');
    } else if (bytes[i] === LF) seen.add('lf');
  }
  if (seen.size === 0) return 'none';
  return seen.size === 1 ? [...seen][0]! : 'mixed';
}

/** CRC-16 of bytes[start, end) with every line end (CR LF, LF or CR) counted as CR LF. */
export function crcAsTransmitted(bytes: Uint8Array, start: number, end: number): number {
  let crc = 0;
  let from = start;
  for (let i = start; i < end; i++) {
    const b = bytes[i];
    if (b !== CR && b !== LF) continue;
    crc = crc16(bytes.subarray(from, i), crc);
    crc = crc16(CRLF, crc);
    if (b === CR && i + 1 < end && bytes[i + 1] === LF) i++;
    from = i + 1;
  }
  return crc16(bytes.subarray(from, end), crc);
}
