/**
 * What the two protocol machines (dex-ucs.ts, ddcmp.ts) have in common: pure transition
 * functions fed with bytes from the port and the firing of their one timer, answering with
 * effects the session (session.ts) carries out. No I/O and no clocks inside, so every timeout
 * and every retry can be driven step by step in a unit test.
 */
export type LinkInput =
  /** The port is open: begin the exchange. `now` is the wall clock (DDCMP's Who Are You carries the date). */
  | { kind: 'begin'; now: Date }
  | { kind: 'bytes'; bytes: Uint8Array }
  /** The timer armed by the last `timer` effect fired. */
  | { kind: 'timeout' };

export type FailCode = 'DEX_NO_ANSWER' | 'DEX_TIMEOUT' | 'DEX_CRC' | 'DEX_TOO_LARGE';

export type LinkEffect =
  /** Write these bytes after waiting `delayMs` (the responder's turn-around delay); writes keep their order. */
  | { kind: 'send'; bytes: Buffer; delayMs: number }
  /** Switch the port to this speed once the writes before it are out (DDCMP's negotiated rate). */
  | { kind: 'baud'; rate: number }
  /** (Re)arm the one timer; it replaces the previous one. */
  | { kind: 'timer'; ms: number }
  | { kind: 'done'; file: Buffer }
  | { kind: 'fail'; code: FailCode; message: string; hint: string };

export interface Step<S> {
  state: S;
  effects: LinkEffect[];
}

export interface LinkMachine<S> {
  /** The speed the port is opened at. */
  readonly baudRate: number;
  initial(maxFileBytes: number): S;
  step(state: S, input: LinkInput): Step<S>;
}

/** The file so far: received pieces and their total, copied only when the read ends. */
export interface Collected {
  readonly pieces: readonly Buffer[];
  readonly bytes: number;
}

export const NOTHING: Collected = { pieces: [], bytes: 0 };

export function collect(c: Collected, piece: Buffer): Collected {
  return { pieces: [...c.pieces, piece], bytes: c.bytes + piece.length };
}

export function tooLarge(bytes: number, max: number): LinkEffect {
  return {
    kind: 'fail',
    code: 'DEX_TOO_LARGE',
    message:
      `the VMC sent more than dex.maxFileBytes (${max} bytes) of ` +
      `audit data (${bytes} so far); the read was stopped`,
    hint:
      'raise dex.maxFileBytes if this machine really writes ' +
      'files that large, or clear old event records in the VMC',
  };
}
