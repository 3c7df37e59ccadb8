/**
 * READY (systemd) means the agent can take a payment: the VMC enabled the reader (so it polls us and
 * will offer sessions) and the payment worker is ready (ledger open, recovery done, Start listening).
 * Whichever comes last sends it; until then the watchdog pings extend the start timeout
 * (docs/operations.md).
 */
import type { Notifier } from './systemd-notify.js';

export interface PaymentReady {
  startUrl: string | null;
}

/**
 * What systemd hears of the agent: READY once, and STATUS on the reader's availability changes,
 * never per vend (systemd logs nothing for it, but each one is a wake-up there).
 */
export class ReadyGate {
  /** Resolves when the payment worker is ready; rejects when it failed or exited first. */
  readonly ready: Promise<PaymentReady>;
  private readerEnabled = false;
  private paymentIsReady = false;
  private sent = false;
  /** The reader's availability last told (STATUS). */
  private lastAvailability: string | null = null;
  private resolveReady!: (ready: PaymentReady) => void;
  private rejectReady!: (err: Error) => void;

  constructor(private readonly notifier: Pick<Notifier, 'ready' | 'status'>) {
    this.ready = new Promise<PaymentReady>((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    // A caller that never awaits `ready` must not see an unhandled rejection.
    this.ready.catch(() => {});
  }

  get paymentReady(): boolean {
    return this.paymentIsReady;
  }

  /** The machine loop wrote the reader's enable to the board. */
  readerEnabledNow(): void {
    this.readerEnabled = true;
    this.sendWhenBoth();
  }

  paymentReadyNow(startUrl: string | null): void {
    this.paymentIsReady = true;
    this.sendWhenBoth();
    this.resolveReady({ startUrl });
  }

  /** The payment worker failed or exited: `ready` rejects (a no-op once it resolved). */
  paymentFailed(err: Error): void {
    this.rejectReady(err);
  }

  /** The reader's status as the machine loop reports it (reader.status). */
  readerStatus(status: string): void {
    const availability = status === 'session' || status === 'vend' ? 'enabled' : status;
    if (availability === this.lastAvailability) return;
    this.lastAvailability = availability;
    this.notifier.status(`reader ${availability}`);
  }

  private sendWhenBoth(): void {
    if (this.sent || !this.readerEnabled || !this.paymentIsReady) return;
    this.sent = true;
    this.notifier.ready('reader enabled, payments ready');
  }
}
