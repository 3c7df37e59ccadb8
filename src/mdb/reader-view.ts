/**
 * The reader as the status LED shows it (docs/devices.md, "What the LED says"): the board's polls
 * as the link watchdog sees them, not the port being open, and the reader's state. A port reopened
 * after a silent board is no board back: only its polls are.
 */
import type { ReaderStatus } from '../ipc/messages.js';

export interface ReaderView {
  /** The port to the board is open. */
  linkUp: boolean;
  /** A POLL came since the port opened and the link watchdog has not expired since. */
  polling: boolean;
  /** A line came from the board since the port opened and no silence verdict since (V answered). */
  answering: boolean;
  status: ReaderStatus;
  /** Held off the bus (a VMC reset loop). */
  held: boolean;
  /** Out of service from afar (fleet reader.disable). */
  outOfService: boolean;
}

export function sameReaderView(a: ReaderView, b: ReaderView): boolean {
  const same = a.linkUp === b.linkUp && a.polling === b.polling && a.answering === b.answering;
  return same && a.status === b.status && a.held === b.held && a.outOfService === b.outOfService;
}

/**
 * up: the board polls and the reader is enabled (or in a session): payments can be taken.
 * waiting: the board is alive but the reader is not enabled: the VMC has not enabled it (start-up,
 * service mode) or the operator put it out of service; nothing is broken here.
 * down: no board (port closed, no poll since it opened, the watchdog expired) or the reader held
 * off the bus by a VMC reset loop.
 */
export type ReaderLed = 'up' | 'waiting' | 'down';

export function readerLedOf(view: ReaderView): ReaderLed {
  if (!view.linkUp || view.held) return 'down';
  // Disabled on purpose (C,0), the board relays no POLL: its answer to the watchdog's V shows it alive.
  const alive = view.polling || (view.outOfService && view.answering);
  if (!alive) return 'down';
  const enabled = view.status === 'enabled' || view.status === 'session' || view.status === 'vend';
  return enabled ? 'up' : 'waiting';
}
