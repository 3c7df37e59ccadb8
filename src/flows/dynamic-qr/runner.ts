/**
 * Runs Dynamic QR payments: one pure state machine (machine.ts) per vend request, fed with
 * gateway outcomes, poll timers and machine-loop events, its effects carried out here in order.
 */
import { currencyAgreed, raiseCurrencyMismatch } from '../currency-alarm.js';
import type { MainToPayment } from '../../ipc/messages.js';
import { formatGatewayDateTime } from '../../gateway/protocol/index.js';
import { newTransactionId } from '../transaction-id.js';
import { tryWrite, type FlowContext } from '../context.js';
import {
  initialState,
  paymentInfoFromQr,
  step,
  type DynamicQrContext,
  type DynamicQrEffect,
  type DynamicQrInput,
  type DynamicQrRecord,
  type DynamicQrState,
} from './machine.js';

interface Running {
  state: DynamicQrState;
  timer: unknown;
}

export class DynamicQrPayments {
  private readonly running = new Map<string, Running>();

  /** `onEnded`: a payment closed (the display may go back to idle once none is left). */
  constructor(
    private readonly ctx: FlowContext,
    private readonly onEnded: () => void = () => {},
  ) {}

  get activeCount(): number {
    return this.running.size;
  }

  private monotonic(): number {
    return this.ctx.monotonicNow?.() ?? this.ctx.now();
  }

  /** True while a payment of this transaction is running here (recovery must leave it alone). */
  owns(txId: string): boolean {
    for (const run of this.running.values()) if (run.state.ctx.txId === txId) return true;
    return false;
  }

  /** A vend request outside a funded session: pay it by Dynamic QR. */
  begin(requestId: string, price: number, item: number): void {
    const { ctx } = this;
    if (this.running.has(requestId)) return;
    const txId = newTransactionId(ctx.now());
    const amount = price;
    const products = [{ item, price }];
    // GenerateQR is this payment's authorization: its time and age limit are recorded with it,
    // and a Void repeats them (docs/decisions/gateway-interface.md).
    const at = new Date(ctx.now());
    const ageLimit = ctx.builders().ageLimit(products);
    const auth = { machineAuTime: formatGatewayDateTime(at), ageLimit };
    const inserted = tryWrite(ctx, 'requestQr', txId, () =>
      ctx.ledger.requestQr({ txId, amount, item, requestId, ...auth }),
    );
    if (!inserted) {
      ctx.toMain({ type: 'vend.deny', requestId, reason: 'storage unavailable' });
      return;
    }
    const qrCtx: DynamicQrContext = {
      requestId,
      txId,
      amount,
      item,
      // Measured on the monotonic clock: a wall-clock step must not end (or stretch) the payment.
      deadlineMs: this.monotonic() + ctx.settings.paymentTimeoutMs,
      expiresAtWallMs: ctx.now() + ctx.settings.paymentTimeoutMs,
      pollIntervalMs: ctx.settings.pollIntervalMs,
      currencyCode: ctx.settings.currencyCode,
      decimalPlaces: ctx.settings.decimalPlaces,
    };
    this.running.set(requestId, { state: initialState(qrCtx), timer: null });
    ctx.log.info({ txId, requestId, amount, item }, 'dynamic QR payment started');
    void ctx.gateway
      .generateQR(ctx.builders().generateQR({ txId, amount, products, at }))
      .then((outcome) => this.feed(requestId, { tag: 'generated', outcome }));
  }

  /** Machine-loop messages that belong to a dynamic payment. */
  handle(message: MainToPayment): void {
    if (message.type === 'vend.result' && message.requestId !== null) {
      this.feed(message.requestId, { tag: 'vend-result', outcome: message.outcome });
    } else if (message.type === 'vend.request.ended') {
      this.feed(message.requestId, { tag: 'request-ended', reason: message.reason, byConsumer: message.byConsumer });
    }
  }

  /** Shutdown: every payment still waiting is treated as if the VMC had dropped it. */
  endAll(reason: string): void {
    for (const requestId of [...this.running.keys()])
      this.feed(requestId, { tag: 'request-ended', reason, byConsumer: false });
  }

  private feed(requestId: string, input: DynamicQrInput): void {
    const run = this.running.get(requestId);
    if (run === undefined) return;
    const { state, effects } = step(run.state, input);
    run.state = state;
    for (let i = 0; i < effects.length;) {
      // Records that follow each other with no effect between them (paid, then vend approved) are
      // one durable write: one commit and one fsync (SD-card wear, docs/decisions/benchmarks.md).
      let end = i;
      while (end < effects.length && effects[end]!.tag === 'record') end++;
      if (end - i > 1) {
        const records = effects.slice(i, end).flatMap((e) => (e.tag === 'record' ? [e.record] : []));
        const txId = run.state.ctx.txId;
        const what = `dynamic ${records.map((r) => r.tag).join(' + ')}`;
        if (
          !tryWrite(this.ctx, what, txId, () =>
            this.ctx.ledger.atomically(() => records.forEach((r) => this.record(txId, r))),
          )
        )
          break;
        i = end;
        continue;
      }
      if (!this.apply(run, effects[i]!)) break;
      i++;
    }
    if (run.state.tag === 'closed') {
      if (run.timer !== null) this.ctx.timers.clearTimeout(run.timer);
      this.running.delete(requestId);
      this.ctx.log.info({ txId: state.ctx.txId, requestId, result: run.state.result }, 'dynamic QR payment ended');
      this.onEnded();
    }
  }

  /** Carries out one effect; false stops the rest (a ledger write failed, so nothing may follow it). */
  private apply(run: Running, effect: DynamicQrEffect): boolean {
    const { ctx } = this;
    const q = run.state.ctx;
    switch (effect.tag) {
      case 'record':
        return tryWrite(ctx, `dynamic ${effect.record.tag}`, q.txId, () => this.record(q.txId, effect.record));
      case 'inquire': {
        const body = ctx.builders().inquiry({
          txId: q.txId,
          amount: q.amount,
          paymentInfo: paymentInfoFromQr(effect.qr, q.amount, q.decimalPlaces),
          attempt: effect.attempt,
          isLast: effect.isLast,
          products: [{ item: q.item, price: q.amount }],
        });
        void ctx.gateway.inquiry(body).then((outcome) => this.feed(q.requestId, { tag: 'inquired', outcome }));
        return true;
      }
      case 'schedule-poll':
        if (run.timer !== null) ctx.timers.clearTimeout(run.timer);
        run.timer = ctx.timers.setTimeout(() => {
          run.timer = null;
          this.feed(q.requestId, { tag: 'poll-due', nowMs: this.monotonic() });
        }, effect.inMs);
        return true;
      case 'void': {
        const ok = tryWrite(ctx, 'voidPayment', q.txId, () => {
          // The Void repeats the GenerateQR's MachineAuTime and AgeLimitation, as recorded.
          const tx = ctx.ledger.getTransaction(q.txId) ?? {
            txId: q.txId,
            amount: q.amount,
            machineAuTime: null,
            ageLimit: null,
            createdAtMs: ctx.now(),
          };
          const body = ctx.bodies.voidWith(tx, effect.paymentInfo, effect.reason.reasonCode, effect.reason.reasonText);
          ctx.ledger.voidPayment(q.txId, effect.reason.reasonCode, body);
        });
        if (ok) ctx.outboxChanged();
        ctx.log.warn({ txId: q.txId, reason: effect.reason }, 'dynamic QR payment voided');
        return true;
      }
      case 'main':
        ctx.toMain(effect.message);
        return true;
      case 'show':
        ctx.show(effect.screen);
        return true;
      case 'currency':
        if (effect.mismatch === null) currencyAgreed(ctx);
        else {
          const mismatch = { txId: q.txId, operation: 'Dynamic QR payment', ...effect.mismatch };
          raiseCurrencyMismatch(ctx, mismatch, 'the vend denied, the payment voided');
        }
        return true;
    }
  }

  private record(txId: string, record: DynamicQrRecord): void {
    const { ledger } = this.ctx;
    switch (record.tag) {
      case 'qr-issued': {
        const qrData: Record<string, string> = {};
        if (record.qr.channelId !== null) qrData.ChannelId = record.qr.channelId;
        if (record.qr.rrn !== null) qrData.RRN = record.qr.rrn;
        if (record.qr.srvTranId !== null) qrData.SrvTranId = record.qr.srvTranId;
        ledger.recordQrIssued(txId, qrData);
        return;
      }
      case 'paid':
        ledger.recordPaid(txId, record.paymentInfo.text, record.paidMinor);
        if (record.paidMinor !== null) this.ctx.log.info({ txId, paidMinor: record.paidMinor }, 'dynamic QR paid');
        return;
      case 'vend-approved':
        ledger.approveVend(txId);
        return;
      case 'vended':
        ledger.recordVended(txId);
        return;
      case 'closed-unpaid':
        ledger.closeUnpaid(
          txId,
          record.result === 'not-issued' ? 'not_issued' : record.result,
          record.code,
          record.detail,
        );
        return;
    }
  }
}
