/**
 * Pieces shared by the transitions: the effect collector, ending a session, failing what is in
 * flight, and the step after a vend result. All pure: they return the next state and push effects.
 */
import { toMajor } from '../codec/amount.js';
import type { SessionEndReason, VendOutcome } from '../../ipc/messages.js';
import {
  ALL_TIMERS,
  type ReaderConfig,
  type ReaderEffect,
  type ReaderModel,
  type ReaderState,
  type Session,
  type StartPurpose,
  type TimerName,
} from './types.js';
import type { BoardCommand } from '../codec/types.js';
import type { MainToPayment } from '../../ipc/messages.js';
import { isChargedVend, type VendApproval } from '../../ipc/vend-outcome.js';

/** Collects effects in order; the machine loop runs them in that order (board writes first where it matters). */
export class Fx {
  readonly list: ReaderEffect[] = [];
  constructor(readonly cfg: ReaderConfig) {}
  send(command: BoardCommand): void {
    this.list.push({ kind: 'send', command });
  }
  /** C,VEND,<amount>, with the vend it approves (the machine loop journals it before the write). */
  approve(amountMinor: number, approval: VendApproval): void {
    this.list.push({ kind: 'send', command: { kind: 'vend-approve', amount: this.major(amountMinor) }, approval });
  }
  post(message: MainToPayment): void {
    this.list.push({ kind: 'post', message });
  }
  arm(timer: TimerName, ms: number): void {
    this.list.push({ kind: 'timer.arm', timer, ms });
  }
  cancel(timer: TimerName): void {
    this.list.push({ kind: 'timer.cancel', timer });
  }
  cancelAll(): void {
    for (const t of ALL_TIMERS) this.cancel(t);
  }
  refuse(what: string, reason: string): void {
    this.list.push({ kind: 'refused', what, reason });
  }
  major(minor: number): number {
    return toMajor(minor, this.cfg.decimalPlaces);
  }
}

export function newSession(txId: string | null, fundsMinor: number): Session {
  return {
    txId,
    fundsMinor,
    remainingMinor: fundsMinor,
    approvedVends: 0,
    vendsSucceeded: 0,
    amountVendedMinor: 0,
    consumerCancelled: false,
    endAfterVend: null,
  };
}

/** The session after a vend it charges (a success, or a reset after the approval: MDB 4.2 7.4.7). */
export function chargeVend(session: Session, amountMinor: number): Session {
  return {
    ...session,
    remainingMinor: session.remainingMinor - amountMinor,
    vendsSucceeded: session.vendsSucceeded + 1,
    amountVendedMinor: session.amountVendedMinor + amountMinor,
  };
}

/** Tells the payment side a static session is over (virtual sessions have no payment to close). */
export function postSessionEnded(fx: Fx, session: Session, reason: SessionEndReason): void {
  if (session.txId === null) return;
  fx.post({
    type: 'session.ended',
    txId: session.txId,
    reason,
    vendsSucceeded: session.vendsSucceeded,
    amountVended: fx.major(session.amountVendedMinor),
  });
}

export interface AbandonWhy {
  sessionReason: SessionEndReason;
  vendOutcome: VendOutcome;
  detail: string;
}

/**
 * Ends whatever is in flight because the reader can no longer see it through (link lost, VMC or
 * board reset, reader disabled, forced shutdown). Every approved vend gets its one vend.result,
 * every open session its one session.ended, every pending request or session start its answer.
 */
export function abandon(fx: Fx, state: ReaderState, why: AbandonWhy): void {
  fx.cancelAll();
  switch (state.kind) {
    case 'Starting':
      refuseStart(fx, state.purpose, why.detail);
      return;
    case 'SessionIdle':
      // A session the VMC ends itself is not abandoned (board-input.ts ends it with consumer-cancel or complete).
      postSessionEnded(fx, state.session, why.sessionReason);
      return;
    case 'Vend': {
      const v = state.vend;
      let session = state.session;
      if (v.phase === 'awaiting-payment') {
        fx.post({ type: 'vend.request.ended', requestId: v.requestId, reason: why.detail, byConsumer: false });
      } else {
        fx.post({
          type: 'vend.result',
          txId: v.txId,
          requestId: v.requestId,
          vendSeq: v.vendSeq,
          outcome: why.vendOutcome,
          detail: why.detail,
        });
        // A reset after the approval is the VMC's VEND SUCCESS (MDB 4.2 7.4.7): the session's count says so too.
        if (session !== null && isChargedVend(why.vendOutcome)) session = chargeVend(session, v.amountMinor);
      }
      if (session) postSessionEnded(fx, session, why.sessionReason);
      return;
    }
    case 'Stopping':
      postSessionEnded(fx, state.session, state.reason);
      if (state.then) refuseStart(fx, state.then, why.detail);
      return;
    default:
      return;
  }
}

export function refuseStart(fx: Fx, purpose: StartPurpose, reason: string): void {
  if (purpose.kind === 'static') fx.post({ type: 'session.refused', txId: purpose.txId, reason });
}

export function beginStart(fx: Fx, purpose: StartPurpose): ReaderState {
  const funds = purpose.kind === 'static' ? purpose.fundsMinor : purpose.creditMinor;
  fx.send({ kind: 'start', funds: fx.major(funds) });
  fx.arm('board-answer', fx.cfg.boardAnswerMs);
  return { kind: 'Starting', purpose, cancelReason: null };
}

export function beginStop(
  fx: Fx,
  session: Session,
  reason: SessionEndReason,
  then: StartPurpose | null = null,
): ReaderState {
  fx.cancel('session-idle');
  fx.cancel('session-refresh');
  fx.send({ kind: 'stop' });
  fx.arm('board-answer', fx.cfg.boardAnswerMs);
  return { kind: 'Stopping', session, reason, then };
}

/** A session waiting for the consumer's next selection (the idle timer runs for static sessions only). */
export function idle(fx: Fx, session: Session): ReaderState {
  if (session.txId !== null) fx.arm('session-idle', fx.cfg.sessionIdleTimeoutMs);
  // Many level 1/2 VMCs drop a session nobody uses: reopen ours before they do (mdb.sessionRefreshMs).
  else if (fx.cfg.sessionRefreshMs !== null) fx.arm('session-refresh', fx.cfg.sessionRefreshMs);
  return { kind: 'SessionIdle', session };
}

/** Where the reader goes once a vend has its result (or a dynamic request its answer). */
export function afterVend(fx: Fx, model: ReaderModel, session: Session | null): ReaderState {
  if (session === null) return { kind: 'Enabled', holdVirtual: false };
  if (session.endAfterVend !== null) return beginStop(fx, session, session.endAfterVend);
  // A VMC without multi-vend expects the session to end after each vend; a new one opens on ENABLED.
  if (session.txId === null && !fx.cfg.multiVend) return beginStop(fx, session, 'complete');
  if (model.shuttingDown) return beginStop(fx, session, 'reader-cancel');
  // Funds used up: nothing more can be approved, so end the session instead of idling until the timeout.
  if (session.txId !== null && session.remainingMinor <= 0) return beginStop(fx, session, 'reader-cancel');
  return idle(fx, session);
}
