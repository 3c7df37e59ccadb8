/**
 * What the payment flows need from the payment worker around them. Everything here is either
 * synchronous and local (the ledger: SQLite in this worker) or asynchronous and remote (the
 * gateway); the main thread is only ever sent messages, never awaited.
 */
import type { Logger } from '../core/log.js';
import type { GatewayClient } from '../gateway/client.js';
import type { RequestBuilders } from '../gateway/envelope.js';
import type { Ledger } from '../ledger/index.js';
import type { PaymentToMain, Screen } from '../ipc/messages.js';
import type { OutboxBodies } from './bodies.js';

export interface FlowSettings {
  preauthAmount: number;
  decimalPlaces: number;
  currencyCode: string;
  paymentTimeoutMs: number;
  pollIntervalMs: number;
  /** The machine's UniQR, shown on the idle screen. */
  uniQr: string;
  /**
   * AgeLimitation of every static QR Authorization: the catalog's highest
   * ageLimit when staticQr.verifyAge is on, else null.
   */
  staticAgeLimit: number | null;
  /** How long the reader may stay unusable (a start, the VMC's own pauses) before the screen says out of order. */
  readerGraceMs: number;
}

export interface FlowTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface FlowContext {
  ledger: Ledger;
  gateway: Pick<GatewayClient, 'authorization' | 'generateQR' | 'inquiry'>;
  builders: () => RequestBuilders;
  bodies: OutboxBodies;
  toMain(message: PaymentToMain): void;
  show(screen: Screen): void;
  /** A row was written to the outbox: wake the drainer. */
  outboxChanged(): void;
  settings: FlowSettings;
  log: Logger;
  /** Wall clock (epoch ms): for what the gateway or a person reads. */
  now(): number;
  /** Monotonic clock for deadlines and polling; unset = `now` (tests drive one fake clock). */
  monotonicNow?: () => number;
  timers: FlowTimers;
  /** Raises or clears an alarm of the fleet link's book (unset: no fleet link; the log line stays). */
  alarm?(code: 'GATEWAY_CURRENCY_MISMATCH', active: boolean, detail: string | null): void;
}

export const realTimers: FlowTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Runs a ledger write; a failure is logged with its code and reported as false, never thrown into a flow. */
export function tryWrite(ctx: FlowContext, what: string, txId: string, write: () => void): boolean {
  try {
    write();
    return true;
  } catch (err) {
    ctx.log.error({ err, txId, code: (err as { code?: string }).code }, `ledger: ${what} failed`);
    return false;
  }
}
