/**
 * What the reader does with the payment side's messages and with its own timers.
 *
 * A message that arrives out of sequence (a stale approval, a cancel for another session) is
 * refused with a reason. One case must not be silent: an approval the reader can no longer use
 * is answered with vend.result `expired`, so the payment side voids that payment.
 */
import { toMinor } from '../codec/amount.js';
import type { PaymentToMain } from '../../ipc/messages.js';
import { afterVend, beginStart, beginStop, postSessionEnded, refuseStart, type Fx } from './common.js';
import type { ReaderModel, ReaderState, TimerName } from './types.js';

export function onPayment(fx: Fx, model: ReaderModel, msg: PaymentToMain): ReaderModel {
  switch (msg.type) {
    case 'session.begin':
      return { ...model, state: onSessionBegin(fx, model, msg.txId, msg.funds) };
    case 'session.cancel':
      return { ...model, state: onSessionCancel(fx, model, msg.txId, msg.reason) };
    case 'vend.approve':
      return onVendApprove(fx, model, msg.requestId, msg.txId, msg.amount);
    case 'vend.deny':
      return { ...model, state: onVendDeny(fx, model, msg.requestId, msg.reason) };
    case 'sessions.allowed':
      return {
        ...model,
        sessionsAllowed: msg.allowed,
        refuseReason: msg.allowed ? null : (msg.reason ?? 'refused by the payment side'),
      };
    case 'reader.service':
      return { ...model, outOfService: msg.outOfService };
    case 'health':
    case 'ready':
    case 'fatal':
    case 'stopped':
    case 'update.activity':
    case 'dex.read': // the daemon hands it to the DEX reads (src/dex/main-side.ts), never to the reader
    case 'vend.journal': // the daemon hands it to the vend journal (src/ledger/vend-journal-writer.ts)
    case 'catalog.set': // the machine loop changes its reader configuration between sessions
      return model; // the machine loop logs these; they do not move the reader
  }
}

function currentTxId(s: ReaderState): string | null {
  switch (s.kind) {
    case 'Starting':
      return s.purpose.kind === 'static' ? s.purpose.txId : null;
    case 'SessionIdle':
      return s.session.txId;
    case 'Vend':
      return s.session?.txId ?? null;
    case 'Stopping':
      return s.session.txId ?? (s.then?.kind === 'static' ? s.then.txId : null);
    default:
      return null;
  }
}

function onSessionBegin(fx: Fx, model: ReaderModel, txId: string, funds: number): ReaderState {
  const s = model.state;
  if (currentTxId(s) === txId) {
    fx.refuse('session.begin', `session ${txId} is already open or opening`);
    return s;
  }
  const fundsMinor = toMinor(funds, fx.cfg.decimalPlaces);
  const refuse = (reason: string): ReaderState => {
    fx.post({ type: 'session.refused', txId, reason });
    return s;
  };
  if (!(fundsMinor > 0)) return refuse('funds must be a positive amount');
  if (model.shuttingDown) return refuse('the reader is shutting down');
  if (!model.sessionsAllowed) return refuse(`new sessions are refused: ${model.refuseReason ?? 'not allowed'}`);
  if (model.outOfService) return refuse('the reader is out of service (fleet reader.disable)');
  const purpose = { kind: 'static', txId, fundsMinor } as const;
  if (s.kind === 'Enabled') return beginStart(fx, purpose);
  // A virtual-credit session is only there so the consumer can select; a paid session replaces it.
  if (s.kind === 'SessionIdle' && s.session.txId === null) return beginStop(fx, s.session, 'reader-cancel', purpose);
  const why: Record<ReaderState['kind'], string> = {
    Offline: 'the MDB link is down',
    Inactive: 'the VMC has not set the reader up',
    Disabled: 'the VMC has disabled the reader',
    Enabled: '',
    Starting: 'another session is opening',
    SessionIdle: 'another session is open',
    Vend: 'a vend is in progress',
    Stopping: 'the previous session is still closing',
  };
  return refuse(why[s.kind]);
}

function onSessionCancel(fx: Fx, model: ReaderModel, txId: string, reason: string): ReaderState {
  const s = model.state;
  if (currentTxId(s) !== txId || s.kind === 'Stopping') {
    fx.refuse('session.cancel', `no open session ${txId} (${reason})`);
    return s;
  }
  switch (s.kind) {
    case 'Starting':
      return { ...s, cancelReason: 'reader-cancel' };
    case 'SessionIdle':
      return beginStop(fx, s.session, 'reader-cancel');
    case 'Vend':
      // Never interrupt a dispense: stop as soon as the VMC reports its result.
      return s.session ? { ...s, session: { ...s.session, endAfterVend: 'reader-cancel' } } : s;
    default:
      return s;
  }
}

function onVendApprove(fx: Fx, model: ReaderModel, requestId: string, txId: string, amount: number): ReaderModel {
  const s = model.state;
  if (s.kind === 'Vend' && s.vend.phase === 'awaiting-payment' && s.vend.requestId === requestId) {
    const amountMinor = toMinor(amount, fx.cfg.decimalPlaces);
    fx.approve(amountMinor, { flow: 'dynamic', txId, requestId });
    fx.cancel('payment-wait');
    fx.arm('vend-result', fx.cfg.vendResultTimeoutMs);
    return {
      ...model,
      lastApproved: { requestId, txId },
      state: {
        kind: 'Vend',
        session: s.session,
        vend: {
          phase: 'awaiting-result',
          priceMinor: s.vend.priceMinor,
          item: s.vend.item,
          amountMinor,
          txId,
          requestId,
          vendSeq: null,
        },
      },
    };
  }
  if (model.lastApproved?.requestId === requestId && model.lastApproved.txId === txId) {
    fx.refuse('vend.approve', `request ${requestId} was already approved with this payment`);
    return model;
  }
  // Too late: the request was denied, timed out, cancelled or reset. The payment must be voided.
  fx.post({
    type: 'vend.result',
    txId,
    requestId,
    vendSeq: null,
    outcome: 'expired',
    detail: 'the vend request had already been answered or dropped',
  });
  return model;
}

function onVendDeny(fx: Fx, model: ReaderModel, requestId: string, reason: string): ReaderState {
  const s = model.state;
  if (s.kind === 'Vend' && s.vend.phase === 'awaiting-payment' && s.vend.requestId === requestId) {
    fx.send({ kind: 'vend-deny' });
    fx.cancel('payment-wait');
    return afterVend(fx, model, s.session);
  }
  fx.refuse('vend.deny', `request ${requestId} is not waiting for payment (${reason})`);
  return s;
}

export function onTimeout(fx: Fx, model: ReaderModel, timer: TimerName): ReaderState {
  const s = model.state;
  switch (timer) {
    case 'session-idle':
      if (s.kind === 'SessionIdle' && s.session.txId !== null) return beginStop(fx, s.session, 'idle-timeout');
      break;
    case 'session-refresh':
      // C,STOP now; the VMC's ENABLED that follows opens a fresh session (maybeOpenVirtualSession).
      if (s.kind === 'SessionIdle' && s.session.txId === null) return beginStop(fx, s.session, 'reader-cancel');
      break;
    case 'vend-result':
      if (s.kind === 'Vend' && s.vend.phase === 'awaiting-result') {
        const v = s.vend;
        // No word from the VMC: treated as failed, the consumer is not charged. The session ends,
        // because a VMC that lost track of one vend should not be trusted with the next.
        fx.post({
          type: 'vend.result',
          txId: v.txId,
          requestId: v.requestId,
          vendSeq: v.vendSeq,
          outcome: 'timeout',
          detail: 'no vend result from the VMC in time',
        });
        if (s.session === null) return { kind: 'Enabled', holdVirtual: false };
        return beginStop(fx, s.session, 'reader-cancel');
      }
      break;
    case 'payment-wait':
      if (s.kind === 'Vend' && s.vend.phase === 'awaiting-payment') {
        fx.send({ kind: 'vend-deny' });
        fx.post({
          type: 'vend.request.ended',
          requestId: s.vend.requestId,
          reason: 'no payment decision before the VMC deadline',
          byConsumer: false,
        });
        return afterVend(fx, model, s.session);
      }
      break;
    case 'board-answer':
      if (s.kind === 'Starting') {
        // Unknown whether the board opened it: stop it to be sure, and tell the payment side it did not start.
        fx.send({ kind: 'stop' });
        refuseStart(fx, s.purpose, 'the board did not confirm the session in time');
        return { kind: 'Enabled', holdVirtual: s.purpose.kind === 'virtual' };
      }
      if (s.kind === 'Stopping') {
        postSessionEnded(fx, s.session, s.reason);
        if (s.then !== null) refuseStart(fx, s.then, 'the previous session did not close in time');
        return { kind: 'Enabled', holdVirtual: false };
      }
      break;
  }
  fx.refuse(`timeout ${timer}`, `stale in state ${s.kind}`);
  return s;
}
