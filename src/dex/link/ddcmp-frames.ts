/**
 * Enhanced DDCMP on the wire (EVA-DTS 6.1.1 sections 3.4-3.6): 8-byte control messages
 * (START, STACK, ACK, NACK) and data messages (an 8-byte header giving the length, then the
 * data and its own CRC-16, both CRCs low byte first). Shared by the link and the simulator.
 */
import { crc16 } from '../crc16.js';

export const CONTROL = 0x05;
export const DATA = 0x81;
export const ACK = 0x01;
export const NACK = 0x02;
export const START = 0x06;
export const STACK = 0x07;
/** Point to point: every slave answers address 1 (3.6.2.1). */
export const POINT_TO_POINT = 0x01;
/** The quick sync flag, always set on an asynchronous link (3.6.2 byte 3). */
const QSYNC = 0x40;
const SELECT = 0x80;
/** The protocol's limit for one data message (14 bits of length, 3.6.3). */
export const MAX_DATA = 0x3fff;

/** Baud-rate codes of START/STACK (3.6.2). */
export const BAUD_CODES: Record<number, number> = {
  2: 2400,
  3: 4800,
  4: 9600,
  5: 19200,
  6: 38400,
  7: 57600,
  8: 115200,
};

function withCrc(bytes: number[]): Buffer {
  const b = Buffer.from(bytes);
  const crc = crc16(b);
  return Buffer.concat([b, Buffer.from([crc & 0xff, crc >>> 8])]);
}

export function control(type: number, b4: number, b5: number, flags = 0, sadd = POINT_TO_POINT): Buffer {
  return withCrc([CONTROL, type, QSYNC | flags, b4 & 0xff, b5 & 0xff, sadd]);
}

export function dataMessage(payload: Buffer, rr: number, tx: number, last = false, sadd = POINT_TO_POINT): Buffer {
  const n = payload.length;
  const header = withCrc([
    DATA,
    n & 0xff,
    QSYNC | (last ? SELECT : 0) | ((n >>> 8) & 0x3f),
    rr & 0xff,
    tx & 0xff,
    sadd,
  ]);
  const crc = crc16(payload);
  return Buffer.concat([header, payload, Buffer.from([crc & 0xff, crc >>> 8])]);
}

export type DdcmpEvent =
  | { kind: 'control'; type: number; flags: number; b4: number; b5: number; sadd: number }
  | { kind: 'data'; rr: number; tx: number; select: boolean; payload: Buffer; crcOk: boolean }
  /** A header whose CRC failed: nothing in it can be trusted, not even the length. */
  | { kind: 'bad-header' };

export interface DdcmpScan {
  readonly mode: 'hunt' | 'header' | 'body';
  readonly header: Buffer;
  readonly body: Buffer;
  readonly len: number;
}

export const DDCMP_HUNT: DdcmpScan = { mode: 'hunt', header: Buffer.alloc(0), body: Buffer.alloc(0), len: 0 };

export function inFrame(scan: DdcmpScan): boolean {
  return scan.mode !== 'hunt';
}

/** Scans `bytes` from `scan`; pure (the partial frame is copied once per call). */
export function scanDdcmp(scan: DdcmpScan, bytes: Uint8Array): { scan: DdcmpScan; events: DdcmpEvent[] } {
  const events: DdcmpEvent[] = [];
  let { mode, len } = scan;
  const header = Buffer.from(scan.header.length ? scan.header : Buffer.alloc(8));
  let body = Buffer.from(scan.body);
  let input = bytes;
  for (let i = 0; i < input.length; i++) {
    const b = input[i]!;
    if (mode === 'hunt') {
      if (b !== CONTROL && b !== DATA) continue; // noise between frames
      mode = 'header';
      len = 0;
    }
    if (mode === 'header') {
      header[len++] = b;
      if (len < 8) continue;
      len = 0;
      mode = 'hunt';
      if (crc16(header.subarray(0, 6)) !== header.readUInt16LE(6)) {
        events.push({ kind: 'bad-header' });
        // Hunt again from the header's second byte: a frame cut short (bytes lost to an
        // overrun or a speed change) must not keep every following frame out of step.
        input = Buffer.concat([header.subarray(1, 8), input.subarray(i + 1)]);
        i = -1;
        continue;
      }
      if (header[0] === CONTROL) {
        events.push({
          kind: 'control',
          type: header[1]!,
          flags: header[2]!,
          b4: header[3]!,
          b5: header[4]!,
          sadd: header[5]!,
        });
        continue;
      }
      body = Buffer.alloc((header[1]! | ((header[2]! & 0x3f) << 8)) + 2);
      mode = 'body';
      continue;
    }
    body[len++] = b;
    if (len < body.length) continue;
    const payload = Buffer.from(body.subarray(0, body.length - 2));
    events.push({
      kind: 'data',
      rr: header[3]!,
      tx: header[4]!,
      select: (header[2]! & SELECT) !== 0,
      payload,
      crcOk: crc16(payload) === body.readUInt16LE(body.length - 2),
    });
    mode = 'hunt';
    len = 0;
  }
  return { scan: { mode, header, body: mode === 'body' ? body : Buffer.alloc(0), len }, events };
}
