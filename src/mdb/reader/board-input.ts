/**
 * What the reader does with each line from the board (the VMC's side of the conversation).
 * Vend requests inside a funded static session are approved here, locally, with no round trip:
 * the approval is the first effect of the transition.
 */
import { toMinor } from '../codec/amount.js';
import type { BoardLine, VmcReaderStatus } from '../codec/types.js';
import { VendErrorCodes } from '../codec/types.js';
import type { VendOutcome } from '../../ipc/messages.js';
import {
  abandon,
  afterVend,
  beginStart,
  beginStop,
  chargeVend,
  idle,
  newSession,
  postSessionEnded,
  refuseStart,
  type Fx,
} from './common.js';
import { awaitsSetconfAnswer, configure, onDisableEcho, onSetOk, onSetRefused } from './configure.js';
import { isChargedVend } from '../../ipc/vend-outcome.js';
import type { ReaderModel, ReaderState, Session } from './types.js';

export function onLine(fx: Fx, model: ReaderModel, line: BoardLine): ReaderModel {
  const s = model.state;
  if (s.kind === 'Offline') {
    fx.refuse(`line ${line.kind}`, 'the link is down');
    return model;
  }
  switch (line.kind) {
    case 'poll':
      return model;
    case 'enable-echo':
      return line.enabled ? model : onDisableEcho(model);
    case 'set-ok':
      return onSetOk(fx, model);
    case 'version':
      return onVersion(fx, model, line.firmware, line.boardId);
    case 'status':
      return { ...model, state: onStatus(fx, model, line.status) };
    case 'session-idle':
      return { ...model, state: onSessionIdle(fx, model, line.funds) };
    case 'vend-request':
      return onVendRequest(fx, model, toMinor(line.price, fx.cfg.decimalPlaces), line.item);
    case 'vend-success':
      return { ...model, state: onVendResult(fx, model, 'success', 0) };
    case 'vend-error':
      return { ...model, state: onVendError(fx, model, line.code) };
    case 'error':
      if (awaitsSetconfAnswer(model)) return onSetRefused(fx, model, `c,ERR,${line.text}`);
      if (model.configuring !== null) {
        fx.refuse(
          `c,ERR,${line.text.slice(0, 60)}`,
          'before the board confirmed C,0: the answer to a line it had before ours',
        );
        return model;
      }
      return { ...model, state: onBoardError(fx, model, line.text) };
    case 'cash-sale':
      // Another device was paid (coins, bills, the other reader): nothing for this reader to do
      // but tell the payment side, which records it. It never touches a session of ours.
      fx.post({ type: 'cash.sale', price: line.price, item: line.item });
      return model;
    case 'ignored':
      return model; // counted by the machine loop
  }
}

function onVersion(fx: Fx, model: ReaderModel, firmware: string, boardId: string): ReaderModel {
  fx.post({ type: 'board.info', firmware, boardId });
  if (model.versionAsked) {
    fx.cancel('config-answer');
    return { ...model, versionAsked: false };
  }
  // Nobody asked: the board restarted (its boot banner) and lost its configuration with it.
  abandon(fx, model.state, { sessionReason: 'vmc-reset', vendOutcome: 'reset', detail: 'the adapter board restarted' });
  return configure(fx, model);
}

function onStatus(fx: Fx, model: ReaderModel, status: VmcReaderStatus): ReaderState {
  const s = model.state;
  if (status === 'INACTIVE') {
    abandon(fx, s, { sessionReason: 'vmc-reset', vendOutcome: 'reset', detail: 'the VMC reset the reader' });
    return { kind: 'Inactive' };
  }
  if (status === 'DISABLED') {
    abandon(fx, s, { sessionReason: 'disabled', vendOutcome: 'failed', detail: 'the VMC disabled the reader' });
    return { kind: 'Disabled' };
  }
  // ENABLED: the reader is enabled with no session open. Inside a session that means the VMC ended it.
  switch (s.kind) {
    case 'Offline':
      return s;
    case 'Inactive':
    case 'Disabled':
    case 'Enabled':
      return { kind: 'Enabled', holdVirtual: false };
    case 'Starting':
      // The VMC re-enabled us while C,START is in flight; the board's answer (or its timer) decides.
      fx.refuse('c,STATUS,ENABLED', 'a session start is pending');
      return s;
    case 'SessionIdle':
      fx.cancel('session-idle');
      postSessionEnded(fx, s.session, s.session.consumerCancelled ? 'consumer-cancel' : 'complete');
      return { kind: 'Enabled', holdVirtual: false };
    case 'Vend': {
      abandon(fx, s, {
        sessionReason: s.session?.consumerCancelled ? 'consumer-cancel' : 'complete',
        vendOutcome: 'failed',
        detail: 'the VMC ended the session without a vend result',
      });
      return { kind: 'Enabled', holdVirtual: false };
    }
    case 'Stopping':
      fx.cancel('board-answer');
      postSessionEnded(fx, s.session, s.reason);
      if (s.then !== null && !model.shuttingDown && model.sessionsAllowed) return beginStart(fx, s.then);
      if (s.then !== null) refuseStart(fx, s.then, 'new sessions are refused');
      return { kind: 'Enabled', holdVirtual: false };
  }
}

function onSessionIdle(fx: Fx, model: ReaderModel, fundsMajor: number | null): ReaderState {
  const s = model.state;
  if (s.kind !== 'Starting') {
    // A repeated IDLE, a funds report inside a session, or the VMC's own session in always-idle mode.
    if (s.kind === 'Inactive' || s.kind === 'Disabled') fx.refuse('c,STATUS,IDLE', `reader is ${s.kind}`);
    return s;
  }
  fx.cancel('board-answer');
  const asked = s.purpose.kind === 'static' ? s.purpose.fundsMinor : s.purpose.creditMinor;
  // The board may confirm less than asked; never approve more than it granted.
  const funds = fundsMajor === null ? asked : Math.min(asked, toMinor(fundsMajor, fx.cfg.decimalPlaces));
  const session = newSession(s.purpose.kind === 'static' ? s.purpose.txId : null, funds);
  if (session.txId !== null) fx.post({ type: 'session.started', txId: session.txId, funds: fx.major(funds) });
  if (s.cancelReason !== null) return beginStop(fx, session, s.cancelReason);
  if (model.shuttingDown) return beginStop(fx, session, 'reader-cancel');
  return idle(fx, session);
}

function onVendRequest(fx: Fx, model: ReaderModel, priceMinor: number, item: number): ReaderModel {
  const s = model.state;
  const deny = (why: string): ReaderModel => {
    fx.send({ kind: 'vend-deny' });
    fx.refuse('vend request', why);
    return model;
  };
  if (s.kind === 'SessionIdle' && s.session.txId !== null) {
    const session = s.session;
    const ageLimit = fx.cfg.ageDeniedItems[item] ?? null;
    if (
      priceMinor > session.remainingMinor ||
      session.endAfterVend !== null ||
      model.shuttingDown ||
      ageLimit !== null
    ) {
      const reason =
        ageLimit !== null
          ? `age-restricted item (${ageLimit}+): the static QR authorization does not verify age`
          : priceMinor > session.remainingMinor
            ? 'price above the remaining funds'
            : 'the session is ending';
      fx.send({ kind: 'vend-deny' });
      fx.post({ type: 'vend.denied', txId: session.txId!, price: fx.major(priceMinor), item, reason, ageLimit });
      return { ...model, state: idle(fx, session) };
    }
    const vendSeq = session.approvedVends + 1;
    // First: nothing may delay the answer.
    fx.approve(priceMinor, { flow: 'static', txId: session.txId!, vendSeq, item, price: fx.major(priceMinor) });
    fx.cancel('session-idle');
    fx.arm('vend-result', fx.cfg.vendResultTimeoutMs);
    fx.post({ type: 'vend.approved', txId: session.txId!, vendSeq, price: fx.major(priceMinor), item });
    const next: Session = { ...session, approvedVends: vendSeq };
    return {
      ...model,
      state: {
        kind: 'Vend',
        session: next,
        vend: {
          phase: 'awaiting-result',
          priceMinor,
          item,
          amountMinor: priceMinor,
          txId: session.txId,
          requestId: null,
          vendSeq,
        },
      },
    };
  }
  const dynamicSession = s.kind === 'SessionIdle' ? s.session : null; // a virtual-credit session
  const dynamicAllowed = dynamicSession !== null || (s.kind === 'Enabled' && fx.cfg.alwaysIdle);
  if (!dynamicAllowed) {
    if (s.kind === 'Vend') {
      fx.refuse('vend request', 'a vend is already in progress');
      return model;
    }
    return deny(s.kind === 'Enabled' ? 'no session is open and always-idle is off' : `reader is ${s.kind}`);
  }
  if (model.shuttingDown) return deny('the reader is shutting down');
  if (!model.sessionsAllowed) return deny(`payments are refused: ${model.refuseReason ?? 'not allowed'}`);
  const requestId = `${fx.cfg.requestIdPrefix}-${model.nextRequestNo}`;
  fx.post({ type: 'vend.requested', requestId, price: fx.major(priceMinor), item });
  fx.cancel('session-idle');
  fx.cancel('session-refresh');
  fx.arm('payment-wait', fx.cfg.paymentWaitMs);
  return {
    ...model,
    nextRequestNo: model.nextRequestNo + 1,
    state: { kind: 'Vend', session: dynamicSession, vend: { phase: 'awaiting-payment', requestId, priceMinor, item } },
  };
}

function onVendResult(fx: Fx, model: ReaderModel, outcome: VendOutcome, code: number): ReaderState {
  const s = model.state;
  if (s.kind !== 'Vend' || s.vend.phase !== 'awaiting-result') {
    fx.refuse(
      outcome === 'success' ? 'c,VEND,SUCCESS' : `c,ERR,VEND ${code}`,
      'no approved vend is waiting for a result',
    );
    return s;
  }
  const v = s.vend;
  fx.cancel('vend-result');
  fx.post({
    type: 'vend.result',
    txId: v.txId,
    requestId: v.requestId,
    vendSeq: v.vendSeq,
    outcome,
    detail: outcome === 'success' ? null : `c,ERR,VEND ${code}`,
  });
  let session = s.session;
  // c,ERR,VEND 5 after the approval is charged like c,VEND,SUCCESS (MDB 4.2 7.4.7, src/ipc/vend-outcome.ts).
  if (session !== null && isChargedVend(outcome)) session = chargeVend(session, v.amountMinor);
  if (session !== null && outcome === 'cancelled') session = { ...session, consumerCancelled: true };
  return afterVend(fx, model, session);
}

function onVendError(fx: Fx, model: ReaderModel, code: number): ReaderState {
  const s = model.state;
  if (s.kind === 'Vend' && s.vend.phase === 'awaiting-payment') {
    // The VMC dropped the request before any answer (consumer cancel, reset): no payment is used.
    fx.cancel('payment-wait');
    fx.post({
      type: 'vend.request.ended',
      requestId: s.vend.requestId,
      reason: code === VendErrorCodes.CANCELLED ? 'cancelled by the consumer' : `c,ERR,VEND ${code}`,
      byConsumer: code === VendErrorCodes.CANCELLED,
    });
    const session =
      s.session && code === VendErrorCodes.CANCELLED ? { ...s.session, consumerCancelled: true } : s.session;
    return afterVend(fx, model, session);
  }
  const outcome: VendOutcome =
    code === VendErrorCodes.CANCELLED ? 'cancelled' : code === VendErrorCodes.RESET ? 'reset' : 'failed';
  if (s.kind === 'SessionIdle' && code === VendErrorCodes.CANCELLED) {
    // The consumer cancelled a selection we had already denied: remember it for the session end reason.
    return { kind: 'SessionIdle', session: { ...s.session, consumerCancelled: true } };
  }
  return onVendResult(fx, model, outcome, code);
}

function onBoardError(fx: Fx, model: ReaderModel, text: string): ReaderState {
  const s = model.state;
  if (s.kind === 'Starting' && text.startsWith('START')) {
    fx.cancel('board-answer');
    refuseStart(fx, s.purpose, `the board refused the session: ${text}`);
    return { kind: 'Enabled', holdVirtual: s.purpose.kind === 'virtual' };
  }
  if (s.kind === 'Stopping' && text.startsWith('STOP')) {
    // The board has no session to stop: it is over either way.
    fx.cancel('board-answer');
    postSessionEnded(fx, s.session, s.reason);
    if (s.then !== null) refuseStart(fx, s.then, 'the previous session could not be stopped cleanly');
    return { kind: 'Enabled', holdVirtual: false };
  }
  fx.refuse(`c,ERR,${text}`, 'the board refused a command');
  return s;
}
