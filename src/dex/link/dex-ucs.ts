/**
 * DEX/UCS as the data carrier (EVA-DTS 6.1.1 section 4): first handshake, second handshake,
 * then the audit file in blocks, as a pure machine (machine.ts).
 *
 * Who leads the first handshake is not fixed (4.5.1): most MDB-era controllers wait for our ENQ,
 * older ones (and coin mechanisms) send their own. We send ENQ and, if the VMC answers with an
 * ENQ of its own instead of DLE 0, become the slave of the first handshake as 4.5.1 asks; the
 * second handshake then runs the other way round. Timers of 4.5.8: A = 1 s for an answer to our
 * ENQ or block, D = 2 s of silence while the VMC has the turn (we allow 2.2 s, as advised), 10 ms
 * before each answer, 100 ms before we open the second handshake. Timer B (100 ms inside a block)
 * is relaxed to D: a USB adapter delivers bytes in bursts, and a block cut short still ends the
 * read at D.
 */
import { collect, NOTHING, tooLarge, type Collected, type LinkEffect, type LinkMachine, type Step } from './machine.js';
import {
  ACK0,
  ACK1,
  encodeBlock,
  ENQ,
  EOT,
  inBlock,
  NAK,
  scanUcs,
  SCAN_IDLE,
  type UcsEvent,
  type UcsScan,
} from './ucs-frames.js';
import { describeCode, readResponseBlock } from './ucs-response.js';

export const UCS_TIMING = { timerAMs: 1000, timerDMs: 2200, responseDelayMs: 10, intersessionMs: 100, wackWaitMs: 200 };
/** ENQs before "no answer"; then auto detection tries DDCMP. */
export const ENQ_ATTEMPTS = 3;
/** Sends of one block (ours or theirs) before the line is declared too noisy. */
export const BLOCK_ATTEMPTS = 3;
/** Our communication ID (4.5.4): manufacturer code "QRV", then seven digits. */
export const OUR_COMM_ID = 'QRV0000001';
const REVISION = 'R00L06';

type Phase =
  | 'new'
  | 'fh-enq' // our ENQ is out: DLE 0 makes us first-handshake master, an ENQ makes us its slave
  | 'fh-sent' // our request block is out, waiting for DLE 1
  | 'fh-slave-block' // the VMC leads: waiting for its block
  | 'fh-slave-eot'
  | 'sh-enq' // we lead the second handshake
  | 'sh-sent'
  | 'sh-slave-enq' // the VMC leads the second handshake
  | 'sh-slave-block'
  | 'sh-slave-eot'
  | 'data-enq'
  | 'data'
  | 'data-eot'
  | 'over';

export interface UcsState {
  readonly phase: Phase;
  readonly scan: UcsScan;
  /** ENQs or sends of our current block so far. */
  readonly attempts: number;
  /** Bad blocks from the VMC in a row. */
  readonly badBlocks: number;
  /** Data blocks accepted: decides DLE 1 / DLE 0 (odd blocks are answered with DLE 1). */
  readonly blocks: number;
  /** The last answer sent, repeated when the VMC asks again with ENQ (it missed it). */
  readonly lastAnswer: Buffer;
  readonly file: Collected;
  readonly max: number;
  /**
   * A second-handshake answer that may have been a refusal (its code is ambiguous or unreadable):
   * what it would mean, said if no data follows it. Null when the answer was read as OK.
   */
  readonly maybeRefused: string | null;
}

const T = UCS_TIMING;
const send = (bytes: Buffer, delayMs: number = T.responseDelayMs): LinkEffect => ({ kind: 'send', bytes, delayMs });
const timer = (ms: number): LinkEffect => ({ kind: 'timer', ms });
const ourRequest = (): Buffer => encodeBlock('soh', Buffer.from(`${OUR_COMM_ID}R${REVISION}`, 'latin1'), true);
// The order of 4.7's worked example (ID, response code, revision), which VMCs are tested against.
const ourResponse = (): Buffer => encodeBlock('soh', Buffer.from(`${OUR_COMM_ID}00${REVISION}`, 'latin1'), true);

function fail(code: 'DEX_NO_ANSWER' | 'DEX_TIMEOUT' | 'DEX_CRC', message: string, hint: string): LinkEffect {
  return { kind: 'fail', code, message, hint };
}
const WIRING =
  'check the cable to the DEX jack (tip = VMC transmit, ring = VMC ' +
  'receive, sleeve = ground) and that the VMC has DEX enabled';
const NOISE = 'the line is noisy: check the cable and its ground, keep it away from mains wiring, and try again';

export const dexUcs: LinkMachine<UcsState> = {
  baudRate: 9600,
  initial: (max) => ({
    phase: 'new',
    scan: SCAN_IDLE,
    attempts: 0,
    badBlocks: 0,
    blocks: 0,
    lastAnswer: ACK0,
    file: NOTHING,
    max,
    maybeRefused: null,
  }),
  step(state, input) {
    if (state.phase === 'over') return { state, effects: [] };
    if (input.kind === 'begin')
      return {
        state: { ...state, phase: 'fh-enq', attempts: 1 },
        effects: [send(Buffer.from([ENQ]), 0), timer(T.timerAMs)],
      };
    if (input.kind === 'timeout') return onTimeout(state);
    const { scan, events } = scanUcs(state.scan, input.bytes);
    let s: UcsState = { ...state, scan };
    const effects: LinkEffect[] = [];
    for (const event of events) {
      const r = onEvent(s, event);
      s = r.state;
      effects.push(...r.effects);
      if (s.phase === 'over') break;
    }
    return { state: s, effects };
  },
};

function over(state: UcsState, effects: LinkEffect[]): Step<UcsState> {
  return { state: { ...state, phase: 'over' }, effects };
}

function onTimeout(s: UcsState): Step<UcsState> {
  switch (s.phase) {
    case 'fh-enq':
      if (s.attempts >= ENQ_ATTEMPTS)
        return over(s, [fail('DEX_NO_ANSWER', `the VMC did not answer ${ENQ_ATTEMPTS} DEX/UCS ENQs`, WIRING)]);
      return { state: { ...s, attempts: s.attempts + 1 }, effects: [send(Buffer.from([ENQ]), 0), timer(T.timerAMs)] };
    case 'fh-sent':
    case 'sh-sent':
    case 'sh-enq':
      return retryOurs(s, 'DEX_TIMEOUT', 'the VMC stopped answering during the DEX/UCS handshake');
    case 'data-eot':
      // The last block was acknowledged: the file is whole even if the VMC never says EOT.
      return over(s, [{ kind: 'done', file: Buffer.concat(s.file.pieces as Buffer[]) }]);
    default: {
      // Silence after an answer that may have been a refusal: it was one.
      if (s.maybeRefused !== null && s.blocks === 0 && !inBlock(s.scan)) {
        return over(s, [refusedAfterAll(s.maybeRefused)]);
      }
      const where = s.phase.startsWith('data')
        ? inBlock(s.scan)
          ? 'in the middle of a block'
          : `after ${s.blocks} block(s)`
        : 'during the handshake';
      return over(s, [
        fail(
          'DEX_TIMEOUT',
          `the VMC went silent ${where} of a DEX/UCS read (${T.timerDMs} ms without a byte)`,
          `${WIRING}; a VMC busy vending may answer on the next try`,
        ),
      ]);
    }
  }
}

/** Our ENQ or block went unanswered or was refused: send it again, up to BLOCK_ATTEMPTS times. */
function retryOurs(s: UcsState, code: 'DEX_TIMEOUT' | 'DEX_CRC', message: string): Step<UcsState> {
  if (s.attempts >= BLOCK_ATTEMPTS)
    return over(s, [fail(code, `${message} (${BLOCK_ATTEMPTS} tries)`, code === 'DEX_CRC' ? NOISE : WIRING)]);
  const bytes = s.phase === 'fh-sent' ? ourRequest() : s.phase === 'sh-sent' ? ourResponse() : Buffer.from([ENQ]);
  return { state: { ...s, attempts: s.attempts + 1 }, effects: [send(bytes), timer(T.timerAMs)] };
}

function badBlock(s: UcsState): Step<UcsState> {
  const badBlocks = s.badBlocks + 1;
  if (badBlocks >= BLOCK_ATTEMPTS)
    return over(s, [
      send(Buffer.from([NAK])),
      fail('DEX_CRC', `${badBlocks} DEX/UCS blocks in a row arrived with a bad CRC`, NOISE),
    ]);
  return { state: { ...s, badBlocks }, effects: [send(Buffer.from([NAK])), timer(T.timerDMs)] };
}

function answer(s: UcsState, phase: Phase, bytes: Buffer, extra: Partial<UcsState> = {}): Step<UcsState> {
  return { state: { ...s, ...extra, phase, lastAnswer: bytes }, effects: [send(bytes), timer(T.timerDMs)] };
}

// The VMC asking again (its timer A ran out) means it missed our last answer.
function repeatAnswer(s: UcsState): Step<UcsState> {
  return { state: s, effects: [send(s.lastAnswer), timer(T.timerDMs)] };
}

function onEvent(s: UcsState, e: UcsEvent): Step<UcsState> {
  const ignore = { state: s, effects: [] };
  const wack = (): Step<UcsState> => ({ state: s, effects: [timer(T.timerAMs + T.wackWaitMs)] });
  switch (s.phase) {
    case 'fh-enq':
      if (e.kind === 'ack0')
        return { state: { ...s, phase: 'fh-sent', attempts: 1 }, effects: [send(ourRequest()), timer(T.timerAMs)] };
      if (e.kind === 'enq') return answer(s, 'fh-slave-block', ACK0);
      if (e.kind === 'wack')
        return { state: s, effects: [send(Buffer.from([ENQ]), T.wackWaitMs), timer(T.timerAMs + T.wackWaitMs)] };
      return ignore;
    case 'fh-sent':
    case 'sh-sent':
      if (e.kind === 'ack1') {
        const next = s.phase === 'fh-sent' ? 'sh-slave-enq' : 'data-enq';
        return { state: { ...s, phase: next, badBlocks: 0 }, effects: [send(Buffer.from([EOT])), timer(T.timerDMs)] };
      }
      if (e.kind === 'nak') return retryOurs(s, 'DEX_CRC', 'the VMC refused our handshake block as damaged');
      if (e.kind === 'wack') return wack();
      return ignore;
    case 'sh-enq':
      if (e.kind === 'ack0')
        return { state: { ...s, phase: 'sh-sent', attempts: 1 }, effects: [send(ourResponse()), timer(T.timerAMs)] };
      if (e.kind === 'wack') return wack();
      return ignore;
    case 'fh-slave-block':
    case 'sh-slave-block':
      return onHandshakeBlock(s, e);
    case 'fh-slave-eot':
      if (e.kind === 'enq') return repeatAnswer(s);
      if (e.kind !== 'eot') return ignore;
      return {
        state: { ...s, phase: 'sh-enq', attempts: 1 },
        effects: [send(Buffer.from([ENQ]), T.intersessionMs), timer(T.timerAMs + T.intersessionMs)],
      };
    case 'sh-slave-enq':
    case 'data-enq':
      if (e.kind !== 'enq') return ignore;
      return answer(s, s.phase === 'sh-slave-enq' ? 'sh-slave-block' : 'data', ACK0);
    case 'sh-slave-eot':
      if (e.kind === 'enq') return repeatAnswer(s);
      if (e.kind === 'eot') return { state: { ...s, phase: 'data-enq' }, effects: [timer(T.timerDMs)] };
      return ignore;
    case 'data':
      return onDataEvent(s, e);
    case 'data-eot':
      if (e.kind === 'enq') return repeatAnswer(s);
      if (e.kind === 'eot') return over(s, [{ kind: 'done', file: Buffer.concat(s.file.pieces as Buffer[]) }]);
      return ignore;
    default:
      return ignore;
  }
}

/** The VMC leads a handshake: its block (the second handshake's carries its answer, 4.5.3). */
function onHandshakeBlock(s: UcsState, e: UcsEvent): Step<UcsState> {
  if (e.kind === 'enq') return repeatAnswer(s);
  if (e.kind === 'overlong' || (e.kind === 'block' && !e.crcOk)) return badBlock(s);
  if (e.kind !== 'block') return { state: s, effects: [] };
  if (s.phase === 'sh-slave-block') {
    const verdict = judgeResponse(e.text.toString('latin1'));
    if (verdict.refusal !== null) {
      const message = `the VMC refused the audit read: ${verdict.refusal}`;
      return over(s, [send(ACK1), fail('DEX_NO_ANSWER', message, REFUSED)]);
    }
    return answer(s, 'sh-slave-eot', ACK1, { badBlocks: 0, maybeRefused: verdict.maybe });
  }
  return answer(s, 'fh-slave-eot', ACK1, { badBlocks: 0 });
}

/** The audit file's blocks, and an EOT that ends the transfer before its last block. */
function onDataEvent(s: UcsState, e: UcsEvent): Step<UcsState> {
  if (e.kind === 'enq') return repeatAnswer(s);
  if (e.kind === 'overlong' || (e.kind === 'block' && !e.crcOk)) return badBlock(s);
  if (e.kind === 'eot' && s.maybeRefused !== null && s.blocks === 0 && s.badBlocks === 0) {
    return over(s, [refusedAfterAll(s.maybeRefused)]);
  }
  if (e.kind === 'eot')
    return s.badBlocks > 0
      ? over(s, [fail('DEX_CRC', 'the VMC gave up after we refused a damaged DEX/UCS block', NOISE)])
      : over(s, [
          fail(
            'DEX_TIMEOUT',
            `the VMC ended the DEX/UCS transfer after ${s.blocks} block(s), before the last one`,
            'try again; if it keeps happening, the VMC may be busy or its audit damaged',
          ),
        ]);
  if (e.kind !== 'block' || e.start !== 'stx') return { state: s, effects: [] };
  return dataBlock(s, e.text, e.last);
}

function dataBlock(s: UcsState, text: Buffer, last: boolean): Step<UcsState> {
  const file = collect(s.file, text);
  if (file.bytes > s.max) return over(s, [send(Buffer.from([EOT])), tooLarge(file.bytes, s.max)]);
  const blocks = s.blocks + 1;
  return answer(s, last ? 'data-eot' : 'data', blocks % 2 === 1 ? ACK1 : ACK0, { file, blocks, badBlocks: 0 });
}

const REFUSED = 'see the VMC manual for its DEX settings; try again later';

/**
 * The second handshake's response block (4.5.3, 4.5.7, read in ucs-response.ts): `refusal` when it
 * is one, `maybe` when it may be one (go on, and say so if no data comes).
 */
function judgeResponse(text: string): { refusal: string | null; maybe: string | null } {
  const response = readResponseBlock(text);
  switch (response.kind) {
    case 'read':
      return { refusal: response.reading.code === '00' ? null : describeCode(response.reading.code), maybe: null };
    case 'ambiguous': {
      const refusals = response.readings.filter((r) => r.code !== '00');
      // Two different refusals are a refusal either way; an OK and a refusal: go on and see.
      if (refusals.length === 2) {
        return { refusal: refusals.map((r) => describeCode(r.code)).join(' or '), maybe: null };
      }
      const refusal = refusals[0]!;
      return { refusal: null, maybe: `${describeCode(refusal.code)} with communication ID ${refusal.commId}` };
    }
    case 'unreadable':
      return { refusal: null, maybe: `an answer qrvend cannot read ("${response.text}")` };
  }
}

function refusedAfterAll(maybe: string): LinkEffect {
  const message = `the VMC refused the audit read: it sent no data after a handshake answer that reads as ${maybe}`;
  return fail('DEX_NO_ANSWER', message, REFUSED);
}
