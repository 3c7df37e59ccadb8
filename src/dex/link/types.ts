/**
 * The DEX link's types (the link itself: src/dex/link/index.ts), apart so the link's own modules
 * use them without importing the index that re-exports those modules.
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
