/**
 * The reader's settings, derived from the configuration, and the board configuration it sends.
 */
import type { QrvendConfig } from '../../config/schema.js';
import { toMinor } from '../codec/amount.js';
import type { BoardCommand } from '../codec/types.js';
import type { ReaderConfig } from './types.js';
import { BOARD_KEY_ALIASES, DEFAULT_BOARD_KEYS, DEVICE_ADDRESS, type BoardKeyName } from '../../config/board-keys.js';

export interface ReaderSetup {
  mdb: QrvendConfig['mdb'];
  /** machine.decimalPlaces */
  decimalPlaces: number;
  /** machine.currencyNumeric (ISO 4217 numeric, e.g. "978") */
  currencyNumeric: string;
  requestIdPrefix: string;
  /** How long the board may take to confirm C,START / C,STOP (default 5 s). */
  boardAnswerMs?: number;
  /** Items a static QR session denies for their age limit (item -> ageLimit); see ageDeniedItems(). */
  ageDeniedItems?: Readonly<Record<number, number>>;
}

/**
 * The catalog items a static QR session must deny locally (docs/decisions/gateway-interface.md): with
 * staticQr.verifyAge false the Authorization vouches for no age, so every item with an ageLimit
 * is refused inside the session. With verifyAge true the Authorization carried the highest limit.
 */
export function ageDeniedItems(
  verifyAge: boolean,
  catalog: Readonly<Record<string, { ageLimit?: number | null }>>,
): Record<number, number> {
  const out: Record<number, number> = {};
  if (verifyAge) return out;
  for (const [item, entry] of Object.entries(catalog)) {
    if (entry.ageLimit != null && entry.ageLimit > 0) out[Number(item)] = entry.ageLimit;
  }
  return out;
}

/**
 * C,SETCONF lines sent while the reader is disabled, in this order, each answered before the next
 * step (src/mdb/reader/configure.ts). The address goes first: a firmware that refuses it must stop
 * the sequence before anything else. The currency code is the MDB form of ISO 4217: a leading 1
 * and the numeric code (EUR 978 -> 0x1978). The scale factor is 1 because amounts travel as
 * decimals in major units. Optional keys (cash sale, the board's idle and message timeouts) are
 * only sent when set, so a firmware without them keeps working as before.
 */
export function setconfCommands(s: Pick<ReaderSetup, 'mdb' | 'decimalPlaces' | 'currencyNumeric'>): BoardCommand[] {
  const names = { ...DEFAULT_BOARD_KEYS, ...s.mdb.boardKeys };
  const set = (key: BoardKeyName, value: string): BoardCommand => ({ kind: 'setconf', key: names[key], value });
  const out = [
    set('address', DEVICE_ADDRESS[s.mdb.device]),
    set('alwaysIdle', s.mdb.alwaysIdle ? '1' : '0'),
    set('currencyCode', `0x1${s.currencyNumeric}`),
    set('decimalPlaces', String(s.decimalPlaces)),
    set('scaleFactor', '1'),
    set('timeoutVend', String(s.mdb.maxResponseTimeS)),
  ];
  if (s.mdb.cashSale) out.push(set('cashSale', '1'));
  if (s.mdb.boardTimeouts.idleS !== null) out.push(set('timeoutIdle', String(s.mdb.boardTimeouts.idleS)));
  if (s.mdb.boardTimeouts.messageS !== null) out.push(set('timeout', String(s.mdb.boardTimeouts.messageS)));
  return out;
}

/** Default key name -> its other spelling, for the keys the site did not name itself. */
export function setconfAliases(siteKeys: Partial<Record<BoardKeyName, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, alias] of Object.entries(BOARD_KEY_ALIASES) as Array<[BoardKeyName, string]>) {
    if (siteKeys[name] === undefined) out[DEFAULT_BOARD_KEYS[name]] = alias;
  }
  return out;
}

export function readerConfigFrom(s: ReaderSetup): ReaderConfig {
  const maxResponseMs = s.mdb.maxResponseTimeS * 1000;
  return {
    decimalPlaces: s.decimalPlaces,
    alwaysIdle: s.mdb.alwaysIdle,
    virtualCreditMinor: s.mdb.virtualCredit === null ? null : toMinor(s.mdb.virtualCredit, s.decimalPlaces),
    sessionIdleTimeoutMs: s.mdb.sessionIdleTimeoutMs,
    sessionRefreshMs: s.mdb.sessionRefreshMs,
    multiVend: s.mdb.multiVend,
    vendResultTimeoutMs: s.mdb.vendResultTimeoutMs,
    // The payment side gives up first (dynamicQr.paymentTimeoutMs < maxResponseTimeS); this is the
    // reader's own backstop so the VMC always gets an answer before its deadline.
    paymentWaitMs: Math.max(1000, maxResponseMs - 1000),
    boardAnswerMs: s.boardAnswerMs ?? 5000,
    setconf: setconfCommands(s),
    setconfAliases: setconfAliases(s.mdb.boardKeys),
    requestIdPrefix: s.requestIdPrefix,
    ageDeniedItems: s.ageDeniedItems ?? {},
  };
}
