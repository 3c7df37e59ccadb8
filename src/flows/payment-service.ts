/**
 * The payment side's front door: routes machine-loop messages to the Static QR flow or the
 * Dynamic QR payments, answers the Start endpoint's questions (busy? seen?), and keeps the
 * display in step with the reader when no payment is on screen.
 */
import type { StartRequest } from '../gateway/protocol/index.js';
import type { StartHooks } from '../start/index.js';
import type { MainToPayment, ReaderStatus } from '../ipc/messages.js';
import { idleScreen } from '../ipc/idle-screen.js';
import { tryWrite, type FlowContext } from './context.js';
import { StaticQrFlow } from './static-qr/flow.js';
import { DynamicQrPayments } from './dynamic-qr/runner.js';
import { isUsable, readerScreen } from './reader-screen.js';

/**
 * The machine loop's messages the flows take; the payment worker routes every other kind
 * (src/daemon/payment-worker-owner.ts).
 */
export type FlowMessage = Extract<
  MainToPayment,
  {
    type:
      | 'reader.status'
      | 'vend.requested'
      | 'vend.result'
      | 'vend.request.ended'
      | 'session.started'
      | 'session.refused'
      | 'vend.approved'
      | 'vend.denied'
      | 'session.ended'
      | 'cash.sale'
      | 'shutdown';
  }
>;

export class PaymentService {
  readonly staticQr: StaticQrFlow;
  readonly dynamicQr: DynamicQrPayments;
  private reader: ReaderStatus = 'offline';
  private stopping = false;
  /**
   * The VMC disabled the reader in the middle of a vend request: it took the selection elsewhere
   * (its card reader, cash; docs/decisions/real-vending-machines.md). That is no fault: the abandoned payment ends
   * (voided if it
   * was or may have been paid) and the idle screen comes back, not "out of order".
   */
  private takenElsewhere = false;
  private cashSaleWindow = { startMs: Number.NEGATIVE_INFINITY, count: 0, dropped: 0 };
  /** Monotonic ms since when the reader has not been usable: the start, or when it last stopped being. */
  private unusableSinceMs: number;
  private recheck: unknown = null;

  constructor(private readonly ctx: FlowContext) {
    this.staticQr = new StaticQrFlow(ctx);
    this.dynamicQr = new DynamicQrPayments(ctx, () => this.showIdleSoon());
    this.unusableSinceMs = this.monotonic();
    // Until the VMC has had its chance to enable the reader: neutral, never "out of order".
    this.showReaderScreen();
  }

  private monotonic(): number {
    return this.ctx.monotonicNow?.() ?? this.ctx.now();
  }

  /** No static session and no dynamic payment is running: the idle screen may show. */
  private get noPayment(): boolean {
    return this.staticQr.activeTxId === null && this.dynamicQr.activeCount === 0;
  }

  /** True while a flow owns this transaction in memory (recovery must leave it alone). */
  owns(txId: string): boolean {
    return this.staticQr.owns(txId) || this.dynamicQr.owns(txId);
  }

  /** The disk takes writes again: write the closings the flows could not write before. */
  retryUnclosed(): void {
    this.staticQr.retryUnclosed();
  }

  /** New sessions held off while an update (or a restart) is switched in (src/updates/activation.ts). */
  private heldForUpdate = false;

  /**
   * Holds new sessions off (or lets them go) and says what is in flight: a session, a payment, an
   * outbox delivery on the wire. A pending vend is inside a session or a payment.
   */
  holdForUpdate(hold: boolean, deliveriesInFlight: number): { busy: string | null } {
    this.heldForUpdate = hold;
    if (this.staticQr.activeTxId !== null) return { busy: 'session running' };
    if (this.dynamicQr.activeCount > 0) return { busy: 'payment running' };
    if (deliveriesInFlight > 0) return { busy: 'outbox delivery in flight' };
    return { busy: null };
  }

  /** What a catalog switch waits for (src/daemon/catalog-switch.ts): a session, a payment, a vend; or null. */
  catalogBusy(): string | null {
    if (this.staticQr.activeTxId !== null) return 'session running';
    if (this.dynamicQr.activeCount > 0) return 'payment running';
    if (this.reader === 'session' || this.reader === 'vend') return 'session running';
    return null;
  }

  /** A catalog applied between sessions: the next static QR Authorization carries this age limit. */
  useStaticAgeLimit(limit: number | null): void {
    this.ctx.settings.staticAgeLimit = limit;
  }

  /**
   * Why a Static QR session cannot start now, or null when it can (docs/decisions/sales-and-recovery.md, Start checks).
   */
  busyReason(): string | null {
    if (this.stopping) return 'shutting down';
    if (this.heldForUpdate) return 'restarting for an update';
    if (!this.ctx.ledger.writable) return 'sessions refused: storage unavailable';
    if (this.reader !== 'enabled')
      return this.reader === 'session' || this.reader === 'vend' ? 'session running' : 'reader not enabled';
    if (this.staticQr.activeTxId !== null) return 'session running';
    if (!this.noPayment) return 'payment running';
    return null;
  }

  startHooks(): StartHooks {
    return {
      readerBusy: () => this.busyReason(),
      transactionSeen: (txId: string) => this.ctx.ledger.transactionIdUsed(txId),
      accept: (request: StartRequest, options?: { held?: boolean }) => this.staticQr.accept(request, options),
      answered: (txId: string) => this.staticQr.answered(txId),
      dropped: (txId: string, why: string) => this.staticQr.dropped(txId, why),
    };
  }

  handle(message: FlowMessage): void {
    switch (message.type) {
      case 'reader.status':
        this.onReaderStatus(message.status);
        return;
      case 'vend.requested':
        if (this.stopping) {
          this.ctx.toMain({ type: 'vend.deny', requestId: message.requestId, reason: 'shutting down' });
          return;
        }
        this.dynamicQr.begin(message.requestId, message.price, message.item);
        return;
      case 'vend.result':
        if (message.requestId !== null) this.dynamicQr.handle(message);
        else this.staticQr.handle(message);
        return;
      case 'vend.request.ended':
        this.dynamicQr.handle(message);
        return;
      case 'session.started':
      case 'session.refused':
      case 'vend.approved':
      case 'vend.denied':
      case 'session.ended':
        this.staticQr.handle(message);
        if (message.type === 'session.ended' || message.type === 'session.refused') this.showIdleSoon();
        return;
      case 'shutdown':
        this.stop();
        return;
      case 'cash.sale':
        this.recordCashSale(message.price, message.item);
        return;
      default: {
        const unknownKind: never = message;
        this.ctx.log.error({ message: unknownKind }, 'a message of an unknown kind reached the payment flows');
      }
    }
  }

  /**
   * A sale another device was paid for: recorded for the audit and the fleet, never charged.
   * A VMC reports one per vend, seconds apart; a board spewing the line must not turn into a
   * stream of synced writes (SD-card wear), so beyond CASH_SALES_PER_WINDOW a window they are
   * counted and dropped with one warning.
   */
  private recordCashSale(price: number, item: number): void {
    const { ctx } = this;
    const now = ctx.monotonicNow?.() ?? ctx.now();
    if (now - this.cashSaleWindow.startMs >= CASH_SALE_WINDOW_MS)
      this.cashSaleWindow = { startMs: now, count: 0, dropped: 0 };
    const w = this.cashSaleWindow;
    if (++w.count > CASH_SALES_PER_WINDOW) {
      if (++w.dropped === 1)
        ctx.log.warn(
          { perWindow: CASH_SALES_PER_WINDOW, windowMs: CASH_SALE_WINDOW_MS },
          'cash sales reported faster than any VMC vends: the rest of this window is dropped (check the board)',
        );
      return;
    }
    if (tryWrite(ctx, 'recordCashSale', 'cash-sale', () => void ctx.ledger.cashSales.record({ price, item }))) {
      ctx.log.info({ price, item }, 'cash sale recorded (paid to another device, not charged)');
    }
  }

  /** No new payments; dynamic payments still waiting end as if the VMC dropped them. */
  stop(): void {
    this.stopping = true;
    this.dynamicQr.endAll('shutting down');
  }

  private onReaderStatus(status: ReaderStatus): void {
    const was = this.reader;
    this.reader = status;
    if (status === was) return;
    this.takenElsewhere = status === 'disabled' && was === 'vend';
    // Whether Starts can be taken changed (reader offline/inactive/disabled <-> usable): worth a
    // line in the journal for a technician; session/vend steps are too frequent to log here.
    if (isUsable(status) !== isUsable(was)) this.ctx.log.info({ status, was }, 'reader availability changed');
    if (isUsable(was) && !isUsable(status)) this.unusableSinceMs = this.monotonic();
    if (status === 'enabled' && this.noPayment) {
      this.showReaderScreen();
    } else if (this.takenElsewhere) {
      this.showIdleSoon(); // and again when the abandoned payment ends, if it is still running
    } else if (!isUsable(status)) {
      this.showReaderScreen();
    }
  }

  /** The idle QR, or while the reader is not usable: waiting through the grace period, then out of order. */
  private showReaderScreen(): void {
    if (this.recheck !== null) this.ctx.timers.clearTimeout(this.recheck);
    this.recheck = null;
    const choice = readerScreen(this.reader, this.monotonic() - this.unusableSinceMs, this.ctx.settings.readerGraceMs);
    if (choice.show === 'idle') {
      this.ctx.show(idleScreen(this.ctx.settings.uniQr));
    } else if (choice.show === 'waiting') {
      this.ctx.show({ kind: 'waiting' });
      this.recheck = this.ctx.timers.setTimeout(() => {
        this.recheck = null;
        if (!isUsable(this.reader) && !this.takenElsewhere) this.showReaderScreen();
      }, choice.recheckInMs);
    } else {
      this.ctx.show({ kind: 'out-of-order', reason: choice.reason, code: choice.code });
    }
  }

  /** After a result screen has been seen for a moment, go back to the idle QR. */
  private showIdleSoon(): void {
    this.ctx.timers.setTimeout(() => {
      if ((this.reader === 'enabled' || (this.reader === 'disabled' && this.takenElsewhere)) && this.noPayment) {
        this.ctx.show(idleScreen(this.ctx.settings.uniQr));
      }
    }, 3000);
  }
}

/** More cash sales than this in CASH_SALE_WINDOW_MS is no VMC vending: a vend takes seconds. */
const CASH_SALES_PER_WINDOW = 20;
const CASH_SALE_WINDOW_MS = 60_000;
