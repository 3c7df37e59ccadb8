/**
 * The Static QR flow on the payment side (docs/decisions/sales-and-recovery.md): Start accepted -> Authorization ->
 * session.begin to the machine loop -> vends recorded as their outcomes arrive -> Settlement
 * (something sold) or Cancel (nothing sold) to the outbox when the session ends.
 *
 * One durable write per point that precedes an effect outside this thread, and no more (each is
 * a commit and an fsync: SD-card wear, docs/decisions/benchmarks.md): the Start and its Authorization are recorded
 * together before the Start is answered (recovery treats start_accepted and authorizing alike);
 * the session's opening and each vend's approval are written with that vend's outcome (an
 * approved vend without an outcome and no vend at all recover the same way: not charged).
 *
 * At most one static session runs at a time. The ledger is written before anything leaves this
 * thread, so a crash at any point leaves a record that recovery can resolve. The session's vends
 * are also kept in memory: if the disk refuses a write mid-session, the session is stopped (no
 * more vends are approved) and its closing is written, vends included, as soon as the disk takes
 * writes again, so a dispensed product is never dropped from the Settlement.
 */
import { ReasonCodes, DeclineCodes, formatGatewayDateTime, type StartRequest } from '../../gateway/protocol/index.js';
import { authAmountOf, minorOf, receivedPaymentInfo } from '../../gateway/wire/index.js';
import { toMajor } from '../../ledger/money.js';
import type { DeclineReason, MainToPayment, Screen, SessionEndReason, VendOutcome } from '../../ipc/messages.js';
import { isChargedVend } from '../../ipc/vend-outcome.js';
import { StartDeclined } from '../../start/index.js';
import { soldItems } from '../bodies.js';
import { authorizationAmount, totalOf } from '../amounts.js';
import { tryWrite, type FlowContext } from '../context.js';
import { idleScreen } from '../../ipc/idle-screen.js';
import { cancelForeignCurrency, currencyAgreed } from './foreign-currency.js';

interface SessionVend {
  item: number;
  price: number;
  outcome: VendOutcome | null;
}

interface StaticSession {
  txId: string;
  /** The board confirmed the session (the ledger's openSession may still be owed). */
  opened: boolean;
  vends: Map<number, SessionVend>;
  /** A ledger write failed during the session: it was stopped, and its closing is retried. */
  degraded: boolean;
}

export class StaticQrFlow {
  private active: StaticSession | null = null;
  /** An accepted Start whose Authorization waits for its answer to be written (see accept). */
  private authorizing: { txId: string; send: () => void } | null = null;
  /** Ended sessions whose Settlement/Cancel could not be written yet (the disk refused). */
  private readonly unclosed = new Map<
    string,
    { session: StaticSession; reason: SessionEndReason; detail: string | null }
  >();

  constructor(private readonly ctx: FlowContext) {}

  get activeTxId(): string | null {
    return this.active?.txId ?? null;
  }

  /** Transactions this flow still owns in memory (recovery must leave them alone). */
  owns(txId: string): boolean {
    return this.active?.txId === txId || this.unclosed.has(txId);
  }

  /**
   * Called by the Start endpoint once every check passed. Claims the session slot and records the
   * Start and its Authorization durably before returning (the endpoint answers Approved when this
   * resolves); the Authorization goes out right after the answer.
   */
  async accept(start: StartRequest, options: { held?: boolean } = {}): Promise<void> {
    const { ctx } = this;
    if (this.active !== null)
      throw new StartDeclined(DeclineCodes.MachineNotResponding, 'machine busy: session running');
    const amount = authorizationAmount(ctx.settings.preauthAmount, start.Balance, ctx.settings.decimalPlaces);
    if (amount <= 0)
      throw new StartDeclined(
        DeclineCodes.InsufficientFunds,
        'insufficient funds: the balance is below the smallest amount',
      );
    const txId = start.TransactionId;
    // The Authorization's time and age limit are recorded with it: its Settlement or Cancel repeats them.
    const at = new Date(ctx.now());
    const auth = { machineAuTime: formatGatewayDateTime(at), ageLimit: ctx.settings.staticAgeLimit };
    const inserted = ctx.ledger.atomically(() => {
      const result = ctx.ledger.acceptStart({ txId, appUserId: start.AppUserId, balance: start.Balance ?? null });
      if (result.created) ctx.ledger.markAuthorizing(txId, amount, auth);
      return result;
    });
    if (!inserted.created)
      throw new StartDeclined(DeclineCodes.TransactionIdUnknownOrDuplicate, 'TransactionId already used');
    this.active = { txId, opened: false, vends: new Map(), degraded: false };
    ctx.show({ kind: 'authorizing' });
    // docs/decisions/sales-and-recovery.md: answered Approved, then the Authorization. The endpoint says when the
    // answer's bytes are out (answered(), before it logs anything), and the Authorization follows
    // at once: the consumer's wait (C,START) waits for it (BENCHMARKS.md). A Start relayed over
    // the fleet link is held: authorized when the relay confirms the wallet got the answer in
    // time (answered), closed with nothing owed when it does not (dropped); src/start/relayed.ts.
    this.authorizing = { txId, send: () => void this.authorize(txId, amount, at, auth.ageLimit) };
    if (options.held !== true) setImmediate(() => this.answered(txId));
  }

  /**
   * A held Start was never confirmed: the wallet was told Declined (or never heard). No
   * Authorization went out, so nothing is owed and nothing goes to the gateway: the transaction is
   * closed as declined (code 30) and the session slot freed.
   */
  dropped(txId: string, why: string): void {
    const pending = this.authorizing;
    if (pending === null || pending.txId !== txId) return;
    this.authorizing = null;
    const { ctx } = this;
    tryWrite(ctx, 'markDeclined', txId, () => ctx.ledger.markDeclined(txId, DeclineCodes.MachineNotResponding, why));
    ctx.log.warn({ txId, why }, 'relayed Start dropped: not confirmed by the relay, nothing authorized');
    this.release(txId);
    ctx.show(idleScreen(ctx.settings.uniQr));
  }

  /** The Approved answer to `txId`'s Start is out: send its Authorization, once. */
  answered(txId: string): void {
    const pending = this.authorizing;
    if (pending === null || pending.txId !== txId) return;
    this.authorizing = null;
    pending.send();
  }

  private async authorize(txId: string, amount: number, at: Date, ageLimit: number | null): Promise<void> {
    const { ctx } = this;
    const outcome = await ctx.gateway.authorization(ctx.builders().authorization({ txId, amount, ageLimit, at }));
    if (outcome.kind === 'approved') {
      // Kept as the exact text received; AuthAmount read from that text, never through a double.
      const paymentInfo = receivedPaymentInfo(outcome)!;
      const dp = ctx.settings.decimalPlaces;
      const approvedMinor = authAmountOf(paymentInfo, dp)?.minor ?? null;
      const askedMinor = BigInt(minorOf(amount, dp));
      const funds = toMajor(
        Number(
          approvedMinor !== null && approvedMinor < askedMinor ? (approvedMinor < 0n ? 0n : approvedMinor) : askedMinor,
        ),
        dp,
      );
      if (!tryWrite(ctx, 'markAuthorized', txId, () => ctx.ledger.markAuthorized(txId, paymentInfo.text, funds))) {
        // The ledger still says "authorizing": recovery cancels it with IsGatewayTimeout.
        this.release(txId);
        ctx.show({ kind: 'out-of-order', reason: 'storage', code: 'E-STORE' });
        return;
      }
      currencyAgreed(ctx);
      ctx.toMain({ type: 'session.begin', txId, funds });
      ctx.show({
        kind: 'session',
        amount: funds,
        currencyCode: ctx.settings.currencyCode,
        decimalPlaces: ctx.settings.decimalPlaces,
      });
      ctx.log.info({ txId, authAmount: funds, ms: outcome.elapsedMs }, 'static QR authorized');
      return;
    }
    if (outcome.kind === 'declined' && outcome.heldFunds === true) {
      // Approved in another currency: unusable, but the gateway holds the money (foreign-currency.ts).
      cancelForeignCurrency(ctx, txId, outcome);
      this.release(txId);
      ctx.show({ kind: 'declined', reason: 'declined', code: outcome.code });
      return;
    }
    if (outcome.kind === 'declined') {
      tryWrite(ctx, 'markDeclined', txId, () => ctx.ledger.markDeclined(txId, outcome.code, outcome.message));
      ctx.log.info({ txId, code: outcome.code }, 'static QR authorization declined');
      this.release(txId);
      ctx.show({ kind: 'declined', reason: declineReason(outcome.code), code: outcome.code });
      return;
    }
    // No verdict: the gateway may have authorized. A Cancel with IsGatewayTimeout releases it.
    ctx.log.warn(
      { txId, failure: outcome.failure, detail: outcome.detail },
      'static QR authorization unanswered: cancel queued',
    );
    const written = tryWrite(ctx, 'cancelAfterAuthTimeout', txId, () => {
      const tx = ctx.ledger.getTransaction(txId)!;
      ctx.ledger.cancelAfterAuthTimeout(txId, ctx.bodies.cancelAfterTimeout(tx));
    });
    if (written) ctx.outboxChanged();
    this.release(txId);
    ctx.show({ kind: 'declined', reason: 'no-answer', code: null });
  }

  /** Messages from the machine loop that belong to a static session. */
  handle(message: MainToPayment): void {
    switch (message.type) {
      case 'session.started': {
        const session = this.sessionOf(message.txId);
        if (session === null) return;
        // Written with the first vend's outcome or the closing, whichever comes first.
        session.opened = true;
        return;
      }
      case 'session.refused':
        this.ctx.log.warn({ txId: message.txId, reason: message.reason }, 'reader refused the session');
        this.end(message.txId, 'reader-cancel', `reader refused the session: ${message.reason}`);
        return;
      case 'vend.approved': {
        const session = this.sessionOf(message.txId);
        if (session === null) return;
        // Written with its outcome (vend.result) or the closing.
        session.vends.set(message.vendSeq, { item: message.item, price: message.price, outcome: null });
        return;
      }
      case 'vend.denied': {
        // An age-restricted item is refused for a reason the consumer cannot guess: say it.
        const screen = message.ageLimit !== null ? ageDeniedScreen() : null;
        this.ctx.log.info(
          {
            txId: message.txId,
            price: message.price,
            item: message.item,
            reason: message.reason,
            ...(screen ? { screen } : {}),
          },
          'vend denied in session',
        );
        if (screen) this.ctx.show(screen);
        return;
      }
      case 'vend.result': {
        const { txId, vendSeq, outcome, detail } = message;
        const session = txId === null ? null : this.sessionOf(txId);
        const vend = vendSeq === null ? undefined : session?.vends.get(vendSeq);
        if (session === null || vend === undefined || vendSeq === null) return;
        vend.outcome = outcome;
        const { ledger } = this.ctx;
        this.write(session, 'recordVendResult', () =>
          ledger.atomically(() => {
            if (session.opened && ledger.getTransaction(session.txId)?.state === 'authorized')
              ledger.openSession(session.txId);
            ledger.recordVendApproved(session.txId, { seq: vendSeq, item: vend.item, price: vend.price });
            ledger.recordVendResult(session.txId, vendSeq, outcome, detail);
          }),
        );
        return;
      }
      case 'session.ended': {
        const session = this.sessionOf(message.txId);
        const remembered = session === null ? null : totalOf(dispensed(session), this.ctx.settings.decimalPlaces);
        if (remembered !== null && Math.abs(remembered - message.amountVended) > 1e-9) {
          this.ctx.log.warn(
            { txId: message.txId, recorded: remembered, reported: message.amountVended },
            'vended amount reported by the reader differs from the vends recorded',
          );
        }
        this.end(message.txId, message.reason, null);
        return;
      }
      default:
        return;
    }
  }

  /** The disk takes writes again: write the closings that were owed. */
  retryUnclosed(): void {
    for (const [txId, pending] of [...this.unclosed]) {
      if (this.writeClosing(pending.session, pending.reason, pending.detail)) this.unclosed.delete(txId);
    }
  }

  private sessionOf(txId: string): StaticSession | null {
    return this.active?.txId === txId ? this.active : null;
  }

  /** A write during the session; if the disk refuses, stop the session so no more vends are approved. */
  private write(session: StaticSession, what: string, write: () => void): void {
    if (tryWrite(this.ctx, what, session.txId, write) || session.degraded) return;
    session.degraded = true;
    this.ctx.toMain({ type: 'session.cancel', txId: session.txId, reason: 'storage unavailable' });
  }

  /** The session is over: write its closing (or keep it to retry) and free the slot. */
  private end(txId: string, reason: SessionEndReason, detail: string | null): void {
    const session = this.sessionOf(txId) ?? { txId, opened: false, vends: new Map(), degraded: false };
    this.release(txId);
    if (!this.writeClosing(session, reason, detail)) {
      this.unclosed.set(txId, { session, reason, detail });
      this.ctx.log.error(
        { txId, code: 'LEDGER_WRITE_FAILED' },
        'session closing not written yet: retried when the disk takes writes again',
      );
      this.ctx.show({ kind: 'out-of-order', reason: 'storage', code: 'E-STORE' });
    }
  }

  /**
   * Settlement when something sold, else Cancel, written with the state change. The vends kept in
   * memory are written first (each write is idempotent), so none is lost to an earlier failure.
   * Returns false when the ledger refused; true when written or when nothing is owed.
   */
  private writeClosing(session: StaticSession, reason: SessionEndReason, detail: string | null): boolean {
    const { ctx } = this;
    const { txId } = session;
    let sold = 0;
    let charged = 0;
    const written = tryWrite(ctx, 'close static session', txId, () =>
      ctx.ledger.atomically(() => {
        const before = ctx.ledger.getTransaction(txId);
        if (before === null || (before.state !== 'authorized' && before.state !== 'session_open')) return;
        if (session.opened && before.state === 'authorized') ctx.ledger.openSession(txId);
        for (const [seq, v] of session.vends) {
          ctx.ledger.recordVendApproved(txId, { seq, item: v.item, price: v.price });
          // A vend whose outcome never came is treated as failed: the consumer is not charged.
          ctx.ledger.recordVendResult(
            txId,
            seq,
            v.outcome ?? 'timeout',
            v.outcome === null ? 'session ended before the vend result' : null,
          );
        }
        const tx = ctx.ledger.getTransaction(txId)!;
        const vends = ctx.ledger.vendsOf(txId);
        sold = vends.filter((v) => isChargedVend(v.state)).length;
        if (sold > 0) {
          ctx.ledger.settleSession(txId, ctx.bodies.settlement(tx, vends));
          charged = totalOf(soldItems(vends), tx.decimalPlaces);
          ctx.log.info({ txId, vends: sold, amount: charged, reason }, 'static session settled');
        } else {
          const reasonCode = cancelReasonCode(reason, vends.length);
          ctx.ledger.cancelSession(
            txId,
            reasonCode,
            ctx.bodies.cancel(tx, reasonCode, detail ?? `session ended: ${reason}`),
          );
          ctx.log.info({ txId, reason }, 'static session cancelled: nothing sold');
        }
      }),
    );
    if (!written) return false;
    ctx.outboxChanged();
    const { currencyCode, decimalPlaces } = ctx.settings;
    ctx.show(
      sold > 0 ? { kind: 'thank-you', amount: charged, currencyCode, decimalPlaces, txId } : { kind: 'session-ended' },
    );
    return true;
  }

  private release(txId: string): void {
    if (this.active?.txId === txId) this.active = null;
  }
}

function dispensed(session: StaticSession): Array<{ item: number; price: number }> {
  return [...session.vends.values()].filter((v) => v.outcome !== null && isChargedVend(v.outcome));
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

/** What the display says when an age-restricted item is refused inside a static QR session. */
export function ageDeniedScreen(): Screen {
  return { kind: 'declined', reason: 'age-restricted', code: null };
}

function declineReason(code: number): DeclineReason {
  return code === DeclineCodes.InsufficientFunds ? 'insufficient-funds' : 'declined';
}
