/**
 * The DEX link: reads the VMC's EVA-DTS audit file over its DEX jack (design section 13,
 * docs/dex.md). Main thread only (serialport is not safe in worker threads); the bytes go to
 * the payment worker, which checks and parses them (src/dex/file, src/dex/audit).
 *
 * The port is opened for a read and closed after it, which releases our transmit line as
 * EVA-DTS 7.3.2 asks of a data carrier left plugged in. One read at a time per link (a second
 * one is refused with DEX_BUSY); a second process is kept off the port by its exclusive lock.
 */
import type { Logger } from '../../core/log.js';

export type DexProtocol = 'dex-ucs' | 'ddcmp';

export interface DexLinkOptions {
  /** The serial device wired to the DEX jack (config dex.port). */
  port: string;
  /** config dex.protocol: auto = try the remembered protocol first, then the other; remember what answered. */
  protocol: 'auto' | DexProtocol;
  /** A small file beside the ledger where the detected protocol is remembered. */
  factsPath: string;
  /** config dex.maxFileBytes: a read that grows beyond this ends with DEX_TOO_LARGE. */
  maxFileBytes: number;
  log: Logger;
}

export interface DexRead {
  protocol: DexProtocol;
  /** The audit file exactly as the VMC sent it (DEX/UCS blocks or DDCMP data messages joined). */
  bytes: Buffer;
  /** Monotonic, from opening the port to the end of the read. */
  durationMs: number;
}

export interface DexLink {
  /**
   * One read. Rejects with a QrvendError: DEX_NO_ANSWER, DEX_TIMEOUT, DEX_CRC, DEX_BUSY,
   * DEX_PORT or DEX_TOO_LARGE (src/core/errors.ts).
   */
  read(): Promise<DexRead>;
  /** Waits for a read under way to end (it is not cut short: the VMC would be left mid-session). */
  close(): Promise<void>;
}

export { openDexLink } from './link.js';
export { dexFactsPathFor } from './facts.js';
