/**
 * The Static QR flow on the payment side (design section 2): Start accepted -> Authorization ->
 * session.begin to the machine loop -> vends recorded as the machine loop approves them locally
 * -> Settlement (something sold) or Cancel (nothing sold) to the outbox when the session ends.
 *
 * At most one static session runs at a time. The ledger is written before anything leaves this
 * thread, so a crash at any point leaves a record that recovery can resolve.
 */
import { roundAmount, ReasonCodes, DeclineCodes, DECLINE_CODE_TEXT, type PaymentInfo, type StartRequest } from '../../gateway/protocol/index.js';
import { gatewayTimeoutPaymentInfo } from '../../gateway/envelope.js';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import type { MainToPayment, SessionEndReason } from '../../ipc/messages.js';
import { soldItems, totalOf } from '../bodies.js';
import { tryWrite, type FlowContext } from '../context.js';

type Phase = 'authorizing' | 'opening' | 'open';

interface ActiveSession {
  txId: string;
  phase: Phase;
  funds: number;
}

/** Authorization amount: the configured pre-auth, capped by the consumer's Balance when given. */
export function authorizationAmount(preauthAmount: number, balance: number | null | undefined, decimalPlaces: number): number {
  const capped = balance === null || balance === undefined ? preauthAmount : Math.min(preauthAmount, balance);
  return roundAmount(capped, decimalPlaces);
}

export class StaticQrFlow {
  private active: ActiveSession | null = null;

  constructor(private readonly ctx: FlowContext) {}

  get activeTxId(): string | null {
    return this.active?.txId ?? null;
  }

  /**
   * Called by the Start endpoint once every check passed. Claims the session slot and records the
   * Start durably before returning (the endpoint answers Approved when this resolves); the
   * Authorization goes out right after.
   */
  async accept(start: StartRequest): Promise<void> {
    const { ctx } = this;
    if (this.active !== null) {
      throw new QrvendError(ErrorCodes.START_REJECTED, 'a session is already running');
    }
    const amount = authorizationAmount(ctx.settings.preauthAmount, start.Balance, ctx.settings.decimalPlaces);
    if (amount <= 0) {
      throw new QrvendError(ErrorCodes.START_REJECTED, 'the consumer balance is zero: nothing to authorize');
    }
    const inserted = ctx.ledger.acceptStart({ txId: start.TransactionId, appUserId: start.AppUserId, balance: start.Balance ?? null });
    if (!inserted.created) {
      throw new QrvendError(ErrorCodes.START_REJECTED, `TransactionId ${start.TransactionId} was already used`);
    }
    this.active = { txId: start.TransactionId, phase: 'authorizing', funds: 0 };
    ctx.show({ kind: 'message', title: 'Please wait', message: 'Authorizing payment' });
    setImmediate(() => void this.authorize(start.TransactionId, amount));
  }

  private async authorize(txId: string, amount: number): Promise<void> {
    const { ctx } = this;
    if (!tryWrite(ctx, 'markAuthorizing', txId, () => ctx.ledger.markAuthorizing(txId, amount))) {
      // Nothing was sent: recovery cancels this Start at the next start-up.
      this.finish(txId);
      ctx.show({ kind: 'out-of-order', reason: 'Storage failure' });
      return;
    }
    const outcome = await ctx.gateway.authorization(ctx.builders().authorization({ txId, amount }));
    if (outcome.kind === 'approved') {
      const paymentInfo = outcome.response.PaymentInfo as PaymentInfo;
      const authAmount = typeof paymentInfo.AuthAmount === 'number' ? Math.min(roundAmount(paymentInfo.AuthAmount, ctx.settings.decimalPlaces), amount) : amount;
      if (!tryWrite(ctx, 'markAuthorized', txId, () => ctx.ledger.markAuthorized(txId, paymentInfo as Record<string, unknown>, authAmount))) {
        this.finish(txId);
        return;
      }
      ctx.log.info({ txId, authAmount, ms: outcome.elapsedMs }, 'static QR authorized');
      if (this.active?.txId === txId) {
        this.active = { txId, phase: 'opening', funds: authAmount };
        ctx.toMain({ type: 'session.begin', txId, funds: authAmount });
        ctx.show({ kind: 'session', amount: authAmount, currencyCode: ctx.settings.currencyCode, decimalPlaces: ctx.settings.decimalPlaces, message: 'Select a product' });
      }
      return;
    }
    if (outcome.kind === 'declined') {
      tryWrite(ctx, 'markDeclined', txId, () => ctx.ledger.markDeclined(txId, outcome.code, outcome.message));
      ctx.log.info({ txId, code: outcome.code }, 'static QR authorization declined');
      this.finish(txId);
      ctx.show({ kind: 'declined', reason: declineReason(outcome.code) });
      return;
    }
    // No verdict: the gateway may have authorized. A Cancel with IsGatewayTimeout releases it.
    const body = JSON.stringify(
      ctx.builders().cancel({
        txId,
        amount,
        paymentInfo: gatewayTimeoutPaymentInfo(),
        reasonCode: ReasonCodes.CancelledByMachine,
        reasonText: 'authorization unanswered (gateway timeout)',
      }),
    );
    ctx.log.warn({ txId, failure: outcome.failure, detail: outcome.detail }, 'static QR authorization unanswered: cancel queued');
    if (tryWrite(ctx, 'cancelAfterAuthTimeout', txId, () => ctx.ledger.cancelAfterAuthTimeout(txId, body))) ctx.outboxChanged();
    this.finish(txId);
    ctx.show({ kind: 'declined', reason: 'Payment service not answering' });
  }

  /** Messages from the machine loop that belong to a static session. */
  handle(message: MainToPayment): void {
    const { ctx } = this;
    switch (message.type) {
      case 'session.started':
        if (tryWrite(ctx, 'openSession', message.txId, () => ctx.ledger.openSession(message.txId)) && this.active?.txId === message.txId) {
          this.active.phase = 'open';
        }
        return;
      case 'session.refused':
        ctx.log.warn({ txId: message.txId, reason: message.reason }, 'reader refused the session');
        this.close(message.txId, 'reader-cancel', `reader refused the session: ${message.reason}`);
        return;
      case 'vend.approved':
        if (message.txId === null) return;
        tryWrite(ctx, 'recordVendApproved', message.txId, () =>
          ctx.ledger.recordVendApproved(message.txId, { seq: message.vendSeq, item: message.item, price: message.price }),
        );
        return;
      case 'vend.denied':
        ctx.log.info({ txId: message.txId, price: message.price, item: message.item, reason: message.reason }, 'vend denied in session');
        return;
      case 'vend.result':
        if (message.txId === null || message.vendSeq === null) return;
        tryWrite(ctx, 'recordVendResult', message.txId, () => ctx.ledger.recordVendResult(message.txId!, message.vendSeq!, message.outcome, message.detail));
        return;
      case 'session.ended': {
        this.close(message.txId, message.reason, null);
        const recorded = totalOf(soldItems(ctx.ledger.vendsOf(message.txId)), ctx.settings.decimalPlaces);
        if (Math.abs(recorded - message.amountVended) > 1e-9) {
          ctx.log.warn({ txId: message.txId, recorded, reported: message.amountVended }, 'vended amount reported by the reader differs from the ledger');
        }
        return;
      }
      default:
        return;
    }
  }

  /** Ends the session: Settlement when something sold, else Cancel, written with the state change. */
  private close(txId: string, reason: SessionEndReason, detail: string | null): void {
    const { ctx } = this;
    const tx = ctx.ledger.getTransaction(txId);
    if (tx === null || (tx.state !== 'authorized' && tx.state !== 'session_open')) {
      this.finish(txId);
      return;
    }
    // A vend whose outcome never came is treated as failed: the consumer is not charged.
    for (const vend of ctx.ledger.vendsOf(txId)) {
      if (vend.state === 'approved') tryWrite(ctx, 'recordVendResult', txId, () => ctx.ledger.recordVendResult(txId, vend.seq, 'timeout', 'session ended first'));
    }
    const vends = ctx.ledger.vendsOf(txId);
    const sold = vends.filter((v) => v.state === 'success');
    let written: boolean;
    if (sold.length > 0) {
      const body = ctx.bodies.settlement(tx, vends);
      written = tryWrite(ctx, 'settleSession', txId, () => ctx.ledger.settleSession(txId, body));
      ctx.log.info({ txId, vends: sold.length, amount: totalOf(soldItems(vends), tx.decimalPlaces), reason }, 'static session settled');
    } else {
      const reasonCode = cancelReasonCode(reason, vends.length);
      const body = ctx.bodies.cancel(tx, reasonCode, detail ?? `session ended: ${reason}`);
      written = tryWrite(ctx, 'cancelSession', txId, () => ctx.ledger.cancelSession(txId, reasonCode, body));
      ctx.log.info({ txId, reason }, 'static session cancelled: nothing sold');
    }
    if (written) ctx.outboxChanged();
    this.finish(txId);
    ctx.show({ kind: 'message', title: sold.length > 0 ? 'Thank you' : 'Session ended', message: sold.length > 0 ? 'Enjoy!' : 'Nothing was charged' });
  }

  private finish(txId: string): void {
    if (this.active?.txId === txId) this.active = null;
  }
}

/**
 * Why nothing was sold, as a Cancel ReasonCode. On the wire a consumer pressing cancel and the VMC
 * ending the session look the same (c,STATUS,ENABLED): a session the VMC ended before any vend
 * was approved was ended by the consumer's choice (2). A vend that was approved but not
 * dispensed, a timeout, a reset or a disable is the machine's doing (3).
 */
export function cancelReasonCode(reason: SessionEndReason, approvedVends: number): number {
  if (reason === 'consumer-cancel') return ReasonCodes.CancelledByConsumer;
  if (reason === 'complete' && approvedVends === 0) return ReasonCodes.CancelledByConsumer;
  return ReasonCodes.CancelledByMachine;
}

function declineReason(code: number): string {
  if (code === DeclineCodes.InsufficientFunds) return 'Insufficient funds';
  return DECLINE_CODE_TEXT[code] ?? `Declined (${code})`;
}
