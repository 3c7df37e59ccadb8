/**
 * Configuring the board at every link open and board restart: C,0, then each C,SETCONF line, and
 * only when the board accepted every one of them (c,SET,OK, in order) C,1 and V.
 *
 * The board loses its configuration at power-up, and a firmware that does not know a key answers
 * `c,ERR,...` instead of c,SET,OK. Enabling the reader anyway would leave it at the wrong MDB address
 * or mode without a word (docs/decisions/real-vending-machines.md item 3), so a refused or unanswered key keeps it
 * disabled and
 * says which key and what the board answered; the machine loop alarms and logs it.
 */
import type { BoardCommand } from '../codec/types.js';
import { abandon, type Fx } from './common.js';
import type { ReaderModel, SetconfLine } from './types.js';

function setconfLines(commands: readonly BoardCommand[]): SetconfLine[] {
  return commands.flatMap((c) => (c.kind === 'setconf' ? [{ key: c.key, value: c.value }] : []));
}

/** Starts the sequence; the reader is Inactive (disabled on the board) until it completes. */
export function configure(fx: Fx, model: ReaderModel): ReaderModel {
  fx.send({ kind: 'enable', enabled: false });
  for (const c of fx.cfg.setconf) fx.send(c);
  const pending = setconfLines(fx.cfg.setconf);
  // One deadline for the whole sequence: no answer means the lines were lost (board hung or still
  // booting) or the firmware ignores a key, and the link is restarted to send them again.
  fx.arm('config-answer', fx.cfg.boardAnswerMs);
  const next: ReaderModel = {
    ...model,
    state: { kind: 'Inactive' },
    configuring: pending,
    disableEchoed: false,
    configRefused: null,
    versionAsked: false,
    hostDisabled: false,
  };
  return pending.length === 0 ? enableAfterConfig(fx, next) : next;
}

/**
 * The sequence was taken: C,1, unless the reader is held off the bus (a VMC reset loop): then it
 * stays disabled, as C,0 left it, until the hold is released (transition.ts). Out of service, C,1
 * still goes and the C,0 follows once the VMC has enabled the reader, as at every start.
 */
function enableAfterConfig(fx: Fx, model: ReaderModel): ReaderModel {
  const keptOff = model.held !== null;
  if (!keptOff) fx.send({ kind: 'enable', enabled: true });
  fx.send({ kind: 'version' }); // its answer shows the board took the whole sequence
  fx.arm('config-answer', fx.cfg.boardAnswerMs);
  fx.list.push({ kind: 'config.done' });
  const next: ReaderModel = { ...model, configuring: null, versionAsked: true };
  return keptOff ? { ...next, hostDisabled: true, state: { kind: 'Disabled' } } : next;
}

/** c,0 (or c,STATUS,OFFLINE): the board took the C,0 that opens the configuration. */
export function onDisableEcho(model: ReaderModel): ReaderModel {
  return model.configuring !== null && !model.disableEchoed ? { ...model, disableEchoed: true } : model;
}

/** Whether a SETCONF answer (c,SET,OK or c,ERR) can be one now: configuring, and after the C,0 echo. */
export function awaitsSetconfAnswer(model: ReaderModel): boolean {
  return model.configuring !== null && model.configuring.length > 0 && model.disableEchoed;
}

/** c,SET,OK: the oldest pending key was taken. */
export function onSetOk(fx: Fx, model: ReaderModel): ReaderModel {
  const pending = model.configuring;
  if (pending === null || pending.length === 0) {
    fx.refuse('c,SET,OK', 'no SETCONF line is waiting for an answer');
    return model;
  }
  if (!model.disableEchoed) {
    fx.refuse('c,SET,OK', 'before the board confirmed C,0: not an answer to our SETCONF lines');
    return model;
  }
  const rest = pending.slice(1);
  return rest.length === 0 ? enableAfterConfig(fx, model) : { ...model, configuring: rest };
}

/**
 * c,ERR,<text> while a SETCONF line waits: the board refused that key. A key with another spelling
 * (fx.cfg.setconfAliases) is tried once more under it; its answer comes after those of the lines
 * already sent, so it waits at the end of the queue. The alias has no alias: a second refusal stops.
 */
export function onSetRefused(fx: Fx, model: ReaderModel, answer: string): ReaderModel {
  const pending = model.configuring!;
  const key = pending[0]!;
  const alias = fx.cfg.setconfAliases[key.key];
  if (alias !== undefined) {
    fx.list.push({ kind: 'config.alias', key: key.key, alias, answer });
    fx.send({ kind: 'setconf', key: alias, value: key.value });
    fx.arm('config-answer', fx.cfg.boardAnswerMs);
    return { ...model, configuring: [...pending.slice(1), { key: alias, value: key.value }] };
  }
  fx.cancel('config-answer');
  fx.list.push({ kind: 'config.refused', key: key.key, value: key.value, answer });
  return { ...model, configuring: null, configRefused: { ...key, answer } };
}

/** The config-answer deadline passed. */
export function onConfigUnanswered(fx: Fx, model: ReaderModel): ReaderModel {
  const waiting = model.configuring !== null && model.configuring.length > 0;
  if ((!model.versionAsked && !waiting) || model.state.kind === 'Offline') {
    fx.refuse('timeout config-answer', `stale in state ${model.state.kind}`);
    return model;
  }
  // C,0 never confirmed: it was lost on the way (garbled into a line the board had half-received),
  // so nothing can be said of any key: the link is opened again and the whole sequence resent.
  const disableLost = waiting && !model.disableEchoed;
  if (waiting && !disableLost) {
    const key = model.configuring![0]!;
    fx.list.push({
      kind: 'config.refused',
      key: key.key,
      value: key.value,
      answer: `no answer within ${fx.cfg.boardAnswerMs} ms`,
    });
  }
  // Not configuring: V went unanswered, after the configuration or as the probe of a quiet line.
  const probe = !waiting && model.hostDisabled;
  const why = disableLost
    ? 'the board did not confirm C,0 (a garbled line at link open?)'
    : probe
      ? 'the board did not answer V (the reader is disabled on purpose, so V is what shows it alive)'
      : 'the board did not answer the configuration';
  abandon(fx, model.state, { sessionReason: 'link-lost', vendOutcome: 'timeout', detail: why });
  if (probe) fx.list.push({ kind: 'board.silent', reason: why });
  fx.list.push({ kind: 'link.restart', reason: why });
  return { ...model, state: { kind: 'Offline' }, versionAsked: false, configuring: null };
}
