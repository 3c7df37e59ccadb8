/**
 * What the consumer sees while the reader cannot take a payment (docs/decisions/smallest-boards.md item 7). At every
 * start
 * the VMC needs a moment (its reset, the setup exchange) before it enables the reader, and a VMC
 * disables the reader for a while in normal operation too; "Out of order" then would be false. So
 * a neutral screen shows first, and out of order only once the reader has been unusable for
 * longer than the grace period (display.readerGraceS). Pure: the caller feeds the time.
 */
import type { OutOfOrderReason, ReaderStatus } from '../ipc/messages.js';

export type ReaderScreen =
  | { show: 'idle' }
  | { show: 'waiting'; recheckInMs: number }
  | { show: 'out-of-order'; reason: OutOfOrderReason; code: string };

/** The reader can take a payment (or is in one): the VMC has it set up and enabled. */
export function isUsable(status: ReaderStatus): boolean {
  return status === 'enabled' || status === 'session' || status === 'vend';
}

/**
 * `unusableForMs`: how long the reader has not been usable (since the start, or since it last
 * was). `recheckInMs` says when the answer changes by itself: ask again then.
 */
export function readerScreen(status: ReaderStatus, unusableForMs: number, graceMs: number): ReaderScreen {
  if (isUsable(status)) return { show: 'idle' };
  if (unusableForMs < graceMs) return { show: 'waiting', recheckInMs: graceMs - unusableForMs };
  if (status === 'offline') return { show: 'out-of-order', reason: 'reader-offline', code: 'E-RDR-OFF' };
  return { show: 'out-of-order', reason: 'unavailable', code: 'E-RDR-DIS' };
}
