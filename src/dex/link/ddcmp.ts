/**
 * Enhanced DDCMP as the master (EVA-DTS 6.1.1 sections 3.5-3.7, application note 6.2.1): START
 * at 2400 baud asking for a faster rate, STACK, a second START/STACK at the agreed rate, Who Are
 * You, Read Data of list 1 (the audit collection), the data messages, Finish. A pure machine
 * (machine.ts).
 *
 * Timings of table 2: 10 STARTs 250 ms apart, 5 sends of a data message, 5 s for the slave's
 * next message (15 s once Read Data is under way). The ACK time-out is 170 ms in table 2; we
 * wait 500 ms before sending again, because a USB adapter and a busy board can be late by more
 * than the difference, and a late ACK after a repeat costs a NACK round (3.5.1.2) while waiting
 * costs nothing on a healthy line.
 */
import { collect, NOTHING, tooLarge, type Collected, type LinkEffect, type LinkMachine, type Step } from './machine.js';
import {
  ACK,
  BAUD_CODES,
  control,
  dataMessage,
  inFrame,
  NACK,
  scanDdcmp,
  DDCMP_HUNT,
  STACK,
  START,
  type DdcmpEvent,
  type DdcmpScan,
} from './ddcmp-frames.js';

export const DDCMP_TIMING = {
  stackTimeoutMs: 250,
  ackTimeoutMs: 500,
  linkTimeoutMs: 5000,
  readTimeoutMs: 15_000,
  turnaroundMs: 40,
};
export const START_ATTEMPTS = 10;
export const DATA_ATTEMPTS = 5;
/** The rate we ask for (code 8 = 115200); the slave's answer caps it (3.6.2: the lower of the two). */
export const REQUESTED_BAUD_CODE = 8;
const T = DDCMP_TIMING;

type Command = 'way' | 'read' | 'finish';
type Phase = 'new' | 'start' | 'start2' | 'cmd' | 'resp' | 'data' | 'over';

export interface DdcmpState {
  readonly phase: Phase;
  readonly scan: DdcmpScan;
  readonly attempts: number;
  /** The command out, or being answered. */
  readonly cmd: Command;
  readonly outgoing: Buffer;
  /** Number of our last data message, and of the slave's last one we accepted (3.5.1.2). */
  readonly tx: number;
  readonly rx: number;
  readonly badMessages: number;
  /** Record length the slave announced; 0xffff = unknown, the select flag ends the file. */
  readonly length: number;
  /** File bytes before the current Read Data: its length counts from here. */
  readonly readBase: number;
  /** Further Read Data commands the slave asked for in its Who Are You answer (3.6.4.1.1 note 6). */
  readonly extraReads: number;
  readonly file: Collected;
  readonly max: number;
  readonly now: Date;
}

const send = (bytes: Buffer, delayMs = T.turnaroundMs): LinkEffect => ({ kind: 'send', bytes, delayMs });
const timer = (ms: number): LinkEffect => ({ kind: 'timer', ms });
const WIRING =
  'check the cable to the DEX jack (tip = VMC transmit, ring = VMC ' +
  'receive, sleeve = ground) and that the VMC has DDCMP (or DEX) enabled';
const NOISE = 'the line is noisy: check the cable and its ground, keep it away from mains wiring, and try again';

export const ddcmp: LinkMachine<DdcmpState> = {
  baudRate: 2400,
  initial: (max) => ({
    phase: 'new',
    scan: DDCMP_HUNT,
    attempts: 0,
    cmd: 'way',
    outgoing: Buffer.alloc(0),
    tx: 0,
    rx: 0,
    badMessages: 0,
    length: 0,
    readBase: 0,
    extraReads: 0,
    file: NOTHING,
    max,
    now: new Date(0),
  }),
  step(state, input) {
    if (state.phase === 'over') return { state, effects: [] };
    if (input.kind === 'begin') {
      const s: DdcmpState = { ...state, phase: 'start', attempts: 1, now: input.now };
      return { state: s, effects: [send(startMessage(REQUESTED_BAUD_CODE), 0), timer(T.stackTimeoutMs)] };
    }
    if (input.kind === 'timeout') return onTimeout(state);
    const { scan, events } = scanDdcmp(state.scan, input.bytes);
    let s: DdcmpState = { ...state, scan };
    const effects: LinkEffect[] = [];
    for (const e of events) {
      const r = onEvent(s, e);
      s = r.state;
      effects.push(...r.effects);
      if (s.phase === 'over') break;
    }
    return { state: s, effects };
  },
};

const startMessage = (mbd: number): Buffer => control(START, 0, mbd);
const over = (s: DdcmpState, effects: LinkEffect[]): Step<DdcmpState> => ({ state: { ...s, phase: 'over' }, effects });
const done = (s: DdcmpState): Step<DdcmpState> =>
  over(s, [{ kind: 'done', file: Buffer.concat(s.file.pieces as Buffer[]) }]);

function onTimeout(s: DdcmpState): Step<DdcmpState> {
  switch (s.phase) {
    case 'start':
    case 'start2':
      if (s.attempts >= START_ATTEMPTS)
        return over(s, [
          s.phase === 'start'
            ? {
                kind: 'fail',
                code: 'DEX_NO_ANSWER',
                message: `the VMC did not answer ${START_ATTEMPTS} DDCMP STARTs`,
                hint: WIRING,
              }
            : {
                kind: 'fail',
                code: 'DEX_TIMEOUT',
                message: 'the VMC agreed a faster DDCMP rate, then did not answer at it',
                hint: 'check the cable (long or unshielded cables fail at high rates) and try again',
              },
        ]);
      return {
        state: { ...s, attempts: s.attempts + 1 },
        effects: [send(startMessage(s.phase === 'start' ? REQUESTED_BAUD_CODE : 0), 0), timer(T.stackTimeoutMs)],
      };
    case 'cmd':
      // The Finish went unacknowledged: the file is whole, only the VMC's
      // reset of its interim counters is in doubt (6.1.5).
      if (s.attempts >= DATA_ATTEMPTS)
        return s.cmd === 'finish'
          ? done(s)
          : over(s, [
              {
                kind: 'fail',
                code: 'DEX_TIMEOUT',
                message:
                  `the VMC stopped acknowledging our DDCMP ` +
                  `${s.cmd === 'way' ? 'Who Are You' : 'Read Data'} (${DATA_ATTEMPTS} tries)`,
                hint: WIRING,
              },
            ]);
      return { state: { ...s, attempts: s.attempts + 1 }, effects: [send(s.outgoing, 0), timer(T.ackTimeoutMs)] };
    default: {
      const where =
        s.phase === 'data'
          ? inFrame(s.scan)
            ? 'in the middle of a data message'
            : `after ${s.file.bytes} bytes`
          : 'before answering our command';
      return over(s, [
        {
          kind: 'fail',
          code: 'DEX_TIMEOUT',
          message: `the VMC went silent ${where} of a DDCMP read`,
          hint: `${WIRING}; a VMC busy vending may answer on the next try`,
        },
      ]);
    }
  }
}

/** Sends our next command as data message tx+1 and waits for its ACK. */
function command(s: DdcmpState, cmd: Command, payload: Buffer): Step<DdcmpState> {
  const tx = (s.tx + 1) & 0xff;
  const outgoing = dataMessage(payload, s.rx, tx);
  return {
    state: { ...s, phase: 'cmd', cmd, outgoing, tx, attempts: 1 },
    effects: [send(outgoing), timer(T.ackTimeoutMs)],
  };
}

function whoAreYou(now: Date): Buffer {
  const bcd = (n: number): number => (Math.floor(n / 10) << 4) | (n % 10);
  const date = [
    now.getUTCDate(),
    now.getUTCMonth() + 1,
    now.getUTCFullYear() % 100,
    now.getUTCHours(),
    now.getUTCMinutes(),
    now.getUTCSeconds(),
  ].map(bcd);
  // Security and pass codes zero (6.1.6: a slave whose code is zero lets every code in; a
  // non-zero one would be stored by a new slave), user id 0, interrogator type 0C = route person.
  return Buffer.from([0x77, 0xe0, 0x00, 0, 0, 0, 0, ...date, 0, 0, 0x0c]);
}

/** Extra reads a slave may ask for; more is not a VMC we know of (and the whole-read bound holds anyway). */
export const MAX_EXTRA_READS = 8;

/** Read Data, list 1 (audit collection), record 1, offset 0, length 0 = the whole record (3.6.4.1.3). */
const READ_AUDIT = Buffer.from([0x77, 0xe2, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00]);
const FINISH = Buffer.from([0x77, 0xff]);

function onEvent(s: DdcmpState, e: DdcmpEvent): Step<DdcmpState> {
  const ignore = { state: s, effects: [] };
  if (e.kind === 'bad-header') return ignore; // the sender repeats when our ACK does not come
  if (e.kind === 'control') {
    if ((s.phase === 'start' || s.phase === 'start2') && e.type === STACK) return onStack(s, e.b4, e.b5);
    if (s.phase === 'cmd' && e.type === ACK && e.b4 === s.tx) return acknowledged(s);
    if (s.phase === 'cmd' && e.type === NACK) {
      if (e.b4 === s.tx) return acknowledged(s); // 3.5.1.2: it had our message; the repeat was the surprise
      if (s.attempts >= DATA_ATTEMPTS)
        return over(s, [
          {
            kind: 'fail',
            code: 'DEX_CRC',
            message: `the VMC refused our DDCMP ${s.cmd} as damaged ${DATA_ATTEMPTS} times`,
            hint: NOISE,
          },
        ]);
      return { state: { ...s, attempts: s.attempts + 1 }, effects: [send(s.outgoing), timer(T.ackTimeoutMs)] };
    }
    return ignore;
  }
  // A data message from the slave.
  if (s.phase === 'cmd' && e.rr === s.tx) s = { ...s, phase: 'resp' }; // its answer carries the ACK (piggy-back)
  if (s.phase !== 'resp' && s.phase !== 'data') return ignore;
  if (!e.crcOk) {
    const badMessages = s.badMessages + 1;
    const nack = send(control(NACK, s.rx, 0, 2));
    if (badMessages >= DATA_ATTEMPTS)
      return over(s, [
        nack,
        {
          kind: 'fail',
          code: 'DEX_CRC',
          message: `${badMessages} DDCMP data messages in a row arrived with a bad CRC`,
          hint: NOISE,
        },
      ]);
    return { state: { ...s, badMessages }, effects: [nack, timer(waitMs(s))] };
  }
  // a repeat: our ACK was lost
  if (e.tx === s.rx) return { state: s, effects: [send(control(ACK, s.rx, 0)), timer(waitMs(s))] };
  if (e.tx !== ((s.rx + 1) & 0xff)) return { state: s, effects: [send(control(NACK, s.rx, 0, 17)), timer(waitMs(s))] };
  const rx = e.tx;
  const ack = send(control(ACK, rx, 0));
  const next: DdcmpState = { ...s, rx, badMessages: 0 };
  if (s.phase === 'data') return dataBlock(next, ack, e.payload, e.select);
  return response(next, ack, e.payload);
}

function waitMs(s: DdcmpState): number {
  return s.phase === 'data' || s.cmd === 'read' ? T.readTimeoutMs : T.linkTimeoutMs;
}

function onStack(s: DdcmpState, sbd: number, mbd: number): Step<DdcmpState> {
  if (s.phase === 'start') {
    const code = sbd === 0 ? 0 : Math.min(sbd, mbd || REQUESTED_BAUD_CODE);
    const rate = BAUD_CODES[code];
    if (rate !== undefined && rate !== 2400)
      return {
        state: { ...s, phase: 'start2', attempts: 1 },
        effects: [{ kind: 'baud', rate }, send(startMessage(0), T.turnaroundMs), timer(T.stackTimeoutMs)],
      };
  }
  return command({ ...s, tx: 0, rx: 0 }, 'way', whoAreYou(s.now));
}

function acknowledged(s: DdcmpState): Step<DdcmpState> {
  if (s.cmd === 'finish') return done(s);
  return { state: { ...s, phase: 'resp' }, effects: [timer(waitMs(s))] };
}

function response(s: DdcmpState, ack: LinkEffect, p: Buffer): Step<DdcmpState> {
  if (s.cmd === 'way') {
    if (p[0] === 0x88 && p[1] === 0xe0 && p[2] === 0x01) {
      // 88 E0 01, security and pass code (4), serial number (8), version, manufacturer, then rd.
      const r = command({ ...s, extraReads: Math.min(p[17] ?? 0, MAX_EXTRA_READS) }, 'read', READ_AUDIT);
      return { state: r.state, effects: [ack, ...r.effects] };
    }
    return over(s, [
      ack,
      {
        kind: 'fail',
        code: 'DEX_NO_ANSWER',
        message: 'the VMC refused our DDCMP Who Are You (its security or pass code is set)',
        hint: 'clear the DDCMP security code in the VMC menu (qrvend sends code 0)',
      },
    ]);
  }
  if (s.cmd === 'read' && p[0] === 0x88 && p[1] === 0xe2 && p[2] === 0x01 && p.length >= 9) {
    const length = p.readUInt16LE(7);
    if (length !== 0xffff && s.file.bytes + length > s.max)
      return over(s, [ack, tooLarge(s.file.bytes + length, s.max)]);
    if (length === 0) return nextRead(s, ack);
    return { state: { ...s, phase: 'data', length, readBase: s.file.bytes }, effects: [ack, timer(T.readTimeoutMs)] };
  }
  return over(s, [
    ack,
    {
      kind: 'fail',
      code: 'DEX_NO_ANSWER',
      message: 'the VMC refused to read its audit over DDCMP (Read Data of list 1 rejected)',
      hint: 'see the VMC manual for its DDCMP audit settings',
    },
  ]);
}

function dataBlock(s: DdcmpState, ack: LinkEffect, p: Buffer, select: boolean): Step<DdcmpState> {
  if (p[0] !== 0x99 || p.length < 2) return { state: s, effects: [ack, timer(T.readTimeoutMs)] };
  const file = collect(s.file, p.subarray(2));
  if (file.bytes > s.max) return over(s, [ack, tooLarge(file.bytes, s.max)]);
  const next = { ...s, file };
  if (select || (s.length !== 0xffff && file.bytes - s.readBase >= s.length)) return nextRead(next, ack);
  return { state: next, effects: [ack, timer(T.readTimeoutMs)] };
}

/** This read is complete: the next one the slave asked for, or Finish. */
function nextRead(s: DdcmpState, ack: LinkEffect): Step<DdcmpState> {
  const r =
    s.extraReads > 0
      ? command({ ...s, extraReads: s.extraReads - 1 }, 'read', READ_AUDIT)
      : command(s, 'finish', FINISH);
  return { state: r.state, effects: [ack, ...r.effects] };
}
