/**
 * The DEX link: reads the VMC's EVA-DTS audit file over its DEX jack (docs/decisions/machine-audit.md,
 * docs/dex.md). Main thread only (serialport is not safe in worker threads); the bytes go to
 * the payment worker, which checks and parses them (src/dex/file, src/dex/audit).
 *
 * The port is opened for a read and closed after it, which releases our transmit line as
 * EVA-DTS 7.3.2 asks of a data carrier left plugged in. One read at a time per link (a second
 * one is refused with DEX_BUSY); a second process is kept off the port by its exclusive lock.
 */
export type { DexLink, DexLinkOptions, DexProtocol, DexRead } from './types.js';
export { openDexLink } from './link.js';
export { dexFactsPathFor } from './facts.js';
