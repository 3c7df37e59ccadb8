/**
 * DEX/UCS on the wire (EVA-DTS 6.1.1 section 4.4): control characters, blocks framed by
 * DLE SOH|STX ... DLE ETB|ETX and a CRC-16 sent low byte first, computed over the block's text
 * and its closing ETB/ETX without the DLEs. Shared by the link and the simulator.
 */
import { crc16 } from '../crc16.js';

export const SOH = 0x01;
export const STX = 0x02;
export const ETX = 0x03;
export const EOT = 0x04;
export const ENQ = 0x05;
export const DLE = 0x10;
export const NAK = 0x15;
export const SYN = 0x16;
export const ETB = 0x17;

export const ACK0 = Buffer.from([DLE, 0x30]);
export const ACK1 = Buffer.from([DLE, 0x31]);
export const WACK = Buffer.from([DLE, 0x3b]);

/** Text of one block at most: 245 bytes from DLE STX through DLE ETB/ETX (4.4), so 241 of text. */
export const MAX_BLOCK_TEXT = 241;

export type UcsEvent =
  | { kind: 'enq' | 'eot' | 'nak' | 'ack0' | 'ack1' | 'wack' }
  | { kind: 'block'; start: 'soh' | 'stx'; text: Buffer; last: boolean; crcOk: boolean }
  /** A block longer than the standard allows: its end was lost; counted as a bad block. */
  | { kind: 'overlong' };

/** Where the scanner is inside the byte stream; `text` holds the block so far (text[0..len)). */
export interface UcsScan {
  readonly mode: 'idle' | 'dle' | 'block' | 'block-dle' | 'crc-lo' | 'crc-hi';
  readonly start: 'soh' | 'stx';
  readonly text: Buffer;
  readonly len: number;
  readonly last: boolean;
  readonly crcLo: number;
}

export const SCAN_IDLE: UcsScan = { mode: 'idle', start: 'stx', text: Buffer.alloc(0), len: 0, last: false, crcLo: 0 };

export function inBlock(scan: UcsScan): boolean {
  return scan.mode !== 'idle' && scan.mode !== 'dle';
}

/**
 * Scans `bytes` from `scan` and returns the events seen and where it ended. Pure: the partial
 * block is copied once per call, never shared with the state passed in.
 */
export function scanUcs(scan: UcsScan, bytes: Uint8Array): { scan: UcsScan; events: UcsEvent[] } {
  const events: UcsEvent[] = [];
  let { mode, start, len, last, crcLo } = scan;
  let text = Buffer.alloc(MAX_BLOCK_TEXT + 1);
  scan.text.copy(text, 0, 0, len);
  const closeBlock = (crcHi: number): void => {
    const body = Buffer.concat([text.subarray(0, len), Buffer.from([last ? ETX : ETB])]);
    const crcOk = crc16(body) === (crcLo | (crcHi << 8));
    events.push({ kind: 'block', start, text: Buffer.from(text.subarray(0, len)), last, crcOk });
    mode = 'idle';
    len = 0;
  };
  for (const b of bytes) {
    switch (mode) {
      case 'idle':
        if (b === DLE) mode = 'dle';
        else if (b === ENQ) events.push({ kind: 'enq' });
        else if (b === EOT) events.push({ kind: 'eot' });
        else if (b === NAK) events.push({ kind: 'nak' });
        // Anything else between blocks is line noise (or a DDCMP frame at the wrong speed).
        break;
      case 'dle':
        mode = 'idle';
        if (b === 0x30) events.push({ kind: 'ack0' });
        else if (b === 0x31) events.push({ kind: 'ack1' });
        else if (b === 0x3b) events.push({ kind: 'wack' });
        else if (b === SOH || b === STX) {
          mode = 'block';
          start = b === SOH ? 'soh' : 'stx';
          len = 0;
        }
        break;
      case 'block':
        if (b === DLE) mode = 'block-dle';
        else if (len >= MAX_BLOCK_TEXT) {
          events.push({ kind: 'overlong' });
          mode = 'idle';
          len = 0;
        } else text[len++] = b;
        break;
      case 'block-dle':
        if (b === ETB || b === ETX) {
          last = b === ETX;
          mode = 'crc-lo';
        } else if (b === SYN)
          mode = 'block'; // TSYN: the sender pausing (4.5.8, timer B)
        else if (b === STX || b === SOH)
          ((len = 0), (mode = 'block')); // a restart: the old block is void
        else mode = 'block';
        break;
      case 'crc-lo':
        crcLo = b;
        mode = 'crc-hi';
        break;
      case 'crc-hi':
        closeBlock(b);
        break;
    }
  }
  if (mode === 'idle' || mode === 'dle') text = Buffer.alloc(0);
  return { scan: { mode, start, text, len, last, crcLo }, events };
}

/** DLE SOH|STX text DLE ETB|ETX CRC(lo, hi). */
export function encodeBlock(start: 'soh' | 'stx', text: Buffer, last: boolean): Buffer {
  const end = last ? ETX : ETB;
  const crc = crc16(Buffer.concat([text, Buffer.from([end])]));
  return Buffer.concat([
    Buffer.from([DLE, start === 'soh' ? SOH : STX]),
    text,
    Buffer.from([DLE, end, crc & 0xff, crc >>> 8]),
  ]);
}
