/**
 * The cashless reader's transition function: (model, input) -> (model, effects). Pure: no timers,
 * no I/O, no clock; timeouts arrive as inputs and everything the reader wants done leaves as
 * effects, so every path can be tested by feeding inputs and reading effects.
 */
import type { ReaderStatus } from '../../ipc/messages.js';
import { onLine } from './board-input.js';
import { abandon, beginStart, beginStop, Fx } from './common.js';
import { configure, onConfigUnanswered } from './configure.js';
import { onPayment, onTimeout } from './payment-input.js';
import type { ReaderConfig, ReaderInput, ReaderModel, ReaderState, Transition } from './types.js';

export function initialModel(): ReaderModel {
  return {
    state: { kind: 'Offline' },
    sessionsAllowed: true,
    refuseReason: null,
    shuttingDown: false,
    versionAsked: false,
    nextRequestNo: 1,
    lastApproved: null,
    outOfService: false,
    hostDisabled: false,
    configuring: null,
    disableEchoed: false,
    configRefused: null,
    held: null,
  };
}

export function transition(model: ReaderModel, input: ReaderInput, cfg: ReaderConfig): Transition {
  const fx = new Fx(cfg);
  let next = step(fx, model, input);
  next = applyOutOfService(fx, next);
  next = maybeOpenVirtualSession(fx, next);
  return { model: next, effects: fx.list };
}

function step(fx: Fx, model: ReaderModel, input: ReaderInput): ReaderModel {
  switch (input.kind) {
    case 'link.up': {
      if (model.state.kind !== 'Offline') abandon(fx, model.state, linkLost('the link was reopened'));
      return configure(fx, model);
    }
    case 'link.down':
      if (model.state.kind === 'Offline') return model;
      abandon(fx, model.state, linkLost(`serial link lost: ${input.reason}`));
      return { ...model, state: { kind: 'Offline' }, versionAsked: false, configuring: null };
    case 'link.silent':
      if (quietOnPurpose(model)) return probeBoard(fx, model);
      // Disabled (C,0), the board relays no POLLs: an unanswered SETCONF shows up as silence first.
      if (model.configuring !== null && model.configuring.length > 0) {
        const key = model.configuring[0]!;
        fx.list.push({
          kind: 'config.refused',
          key: key.key,
          value: key.value,
          answer: 'no answer before the link watchdog expired',
        });
      }
      abandon(fx, model.state, linkLost('no line from the board within the link watchdog'));
      fx.list.push({ kind: 'board.silent', reason: 'no line from the board within mdb.linkWatchdogMs' });
      fx.list.push({ kind: 'link.restart', reason: 'link watchdog expired' });
      return { ...model, state: { kind: 'Offline' }, versionAsked: false, configuring: null };
    case 'line':
      return onLine(fx, model, input.line);
    case 'payment':
      return onPayment(fx, model, input.message);
    case 'timeout':
      if (input.timer === 'config-answer') return onConfigUnanswered(fx, model);
      return { ...model, state: onTimeout(fx, model, input.timer) };
    case 'shutdown':
      return { ...model, shuttingDown: true, state: onShutdown(fx, model.state) };
    case 'hold':
      return { ...model, held: input.reason };
    case 'shutdown.force':
      abandon(fx, model.state, {
        sessionReason: 'reader-cancel',
        vendOutcome: 'timeout',
        detail: 'the agent stopped before the vend result',
      });
      if (model.state.kind !== 'Offline') fx.send({ kind: 'enable', enabled: false });
      return { ...model, shuttingDown: true, state: { kind: 'Offline' } };
  }
}

/**
 * Disabled on purpose (held off the bus, out of service) and configured: the board relays no POLL
 * to a disabled reader (docs/mdb.md, "Link problems"), so a quiet line says nothing of the board.
 */
function quietOnPurpose(model: ReaderModel): boolean {
  const kept = model.held !== null || model.outOfService;
  const configured = model.configuring === null && model.configRefused === null;
  return kept && model.hostDisabled && configured && !model.versionAsked;
}

/** Asks the board V: its answer (any line) shows it alive; none within boardAnswerMs restarts the link. */
function probeBoard(fx: Fx, model: ReaderModel): ReaderModel {
  fx.send({ kind: 'version' });
  fx.arm('config-answer', fx.cfg.boardAnswerMs);
  return { ...model, versionAsked: true };
}

function linkLost(detail: string) {
  return { sessionReason: 'link-lost', vendOutcome: 'timeout', detail } as const;
}

function onShutdown(fx: Fx, s: ReaderState): ReaderState {
  switch (s.kind) {
    case 'SessionIdle':
      return beginStop(fx, s.session, 'reader-cancel');
    case 'Vend':
      if (s.vend.phase === 'awaiting-payment') {
        fx.send({ kind: 'vend-deny' });
        fx.cancel('payment-wait');
        fx.post({
          type: 'vend.request.ended',
          requestId: s.vend.requestId,
          reason: 'the agent is shutting down',
          byConsumer: false,
        });
        return s.session ? beginStop(fx, s.session, 'reader-cancel') : { kind: 'Enabled', holdVirtual: false };
      }
      // A dispense in progress finishes first; afterVend() stops the session once its result is in.
      return s;
    case 'Starting':
      return { ...s, cancelReason: s.cancelReason ?? 'reader-cancel' };
    default:
      return s;
  }
}

/**
 * Out of service from afar (fleet reader.disable / reader.enable): the reader is disabled on the
 * board (C,0, the VMC sees it disabled) as soon as no session or vend is running, and enabled
 * again (C,1) when the operator says so. A running session always finishes first.
 */
function applyOutOfService(fx: Fx, model: ReaderModel): ReaderModel {
  const s = model.state;
  if (s.kind === 'Offline') return model.hostDisabled ? { ...model, hostDisabled: false } : model;
  // Configuring, or the board refused a key: C,1 comes from configure.ts, never from here.
  if (model.configuring !== null || model.configRefused !== null) return model;
  if (model.outOfService || model.held !== null) {
    // A virtual-credit session holds no payment: end it first, the C,0 follows once it closed.
    if (s.kind === 'SessionIdle' && s.session.txId === null)
      return { ...model, state: beginStop(fx, s.session, 'reader-cancel') };
    // Enabled again (the board or the VMC restarted and set the reader up): disable it again. A
    // hold (reset loop) disables at once, before the VMC enables: the point is to drop off its bus.
    const quiet =
      s.kind === 'Enabled' ||
      (model.held !== null && !model.hostDisabled && (s.kind === 'Inactive' || s.kind === 'Disabled'));
    if (!quiet) return model;
    fx.send({ kind: 'enable', enabled: false });
    return { ...model, hostDisabled: true, state: { kind: 'Disabled' } };
  }
  if (model.hostDisabled) {
    fx.send({ kind: 'enable', enabled: true });
    return { ...model, hostDisabled: false, state: { kind: 'Inactive' } };
  }
  return model;
}

/** For VMCs without always-idle: keep a virtual-credit session open whenever the reader is enabled. */
function maybeOpenVirtualSession(fx: Fx, model: ReaderModel): ReaderModel {
  const s = model.state;
  const credit = fx.cfg.virtualCreditMinor;
  if (s.kind !== 'Enabled' || s.holdVirtual || credit === null || fx.cfg.alwaysIdle) return model;
  if (!model.sessionsAllowed || model.shuttingDown || model.outOfService || model.held !== null) return model;
  return { ...model, state: beginStart(fx, { kind: 'virtual', creditMinor: credit }) };
}

/** The reader state as the payment side sees it (the Start busy check, the display, the LED). */
export function readerStatus(model: ReaderModel): { status: ReaderStatus; txId: string | null } {
  const s = model.state;
  switch (s.kind) {
    case 'Offline':
      return { status: 'offline', txId: null };
    case 'Inactive':
      return { status: 'inactive', txId: null };
    case 'Disabled':
      return { status: 'disabled', txId: null };
    case 'Enabled':
      return { status: 'enabled', txId: null };
    case 'Starting':
      return s.purpose.kind === 'static'
        ? { status: 'session', txId: s.purpose.txId }
        : { status: 'enabled', txId: null };
    case 'SessionIdle':
      return s.session.txId !== null ? { status: 'session', txId: s.session.txId } : { status: 'enabled', txId: null };
    case 'Vend':
      return { status: 'vend', txId: s.session?.txId ?? (s.vend.phase === 'awaiting-result' ? s.vend.txId : null) };
    case 'Stopping': {
      if (s.session.txId !== null) return { status: 'session', txId: s.session.txId };
      return s.then?.kind === 'static' ? { status: 'session', txId: s.then.txId } : { status: 'enabled', txId: null };
    }
  }
}

/** Nothing in flight: no session, no vend, no start or stop waiting for the board. */
export function isQuiescent(model: ReaderModel): boolean {
  const k = model.state.kind;
  if (k === 'Offline' || k === 'Inactive' || k === 'Disabled' || k === 'Enabled') return true;
  // A virtual-credit session holds no payment: it may be dropped at any time.
  if (k === 'SessionIdle') return model.state.session.txId === null;
  return false;
}
