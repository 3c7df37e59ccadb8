/**
 * Alarm debounce as a pure state (docs/decisions/fleet-link.md): conditions are observed (true/false) as often
 * as the daemon likes; an alarm is raised only after its condition held for `raiseAfterMs`, and
 * cleared only after it was absent for `clearAfterMs`, so a flapping condition yields no events
 * at all instead of a flood. No timers inside: the caller passes the monotonic time and calls
 * settle() on its own tick.
 */
import { ALARM_CODES, type AlarmCode } from '../contract/alarms.js';

export interface AlarmTiming {
  raiseAfterMs: number;
  clearAfterMs: number;
}

/** Conditions a person must see at once raise at once; the ones that flap wait. */
export const ALARM_TIMING: Record<AlarmCode, AlarmTiming> = {
  READER_OFFLINE: { raiseAfterMs: 15_000, clearAfterMs: 30_000 },
  BOARD_SILENT: { raiseAfterMs: 15_000, clearAfterMs: 30_000 },
  GATEWAY_UNREACHABLE: { raiseAfterMs: 30_000, clearAfterMs: 60_000 },
  OUTBOX_DEAD_LETTER: { raiseAfterMs: 0, clearAfterMs: 0 },
  DISK_UNWRITABLE: { raiseAfterMs: 5_000, clearAfterMs: 30_000 },
  LEDGER_CORRUPT: { raiseAfterMs: 0, clearAfterMs: 0 },
  CLOCK_UNSYNCED: { raiseAfterMs: 0, clearAfterMs: 60_000 },
  VMC_RESET_LOOP: { raiseAfterMs: 0, clearAfterMs: 300_000 },
  BOARD_CONFIG_REFUSED: { raiseAfterMs: 0, clearAfterMs: 0 },
  CONFIG_ROLLED_BACK: { raiseAfterMs: 0, clearAfterMs: 0 },
  UPDATE_ROLLED_BACK: { raiseAfterMs: 0, clearAfterMs: 0 },
  UPDATE_DEFERRED: { raiseAfterMs: 0, clearAfterMs: 0 },
  DEX_READ_FAILED: { raiseAfterMs: 0, clearAfterMs: 0 },
  AUDIT_MISMATCH: { raiseAfterMs: 0, clearAfterMs: 0 },
  GATEWAY_CURRENCY_MISMATCH: { raiseAfterMs: 0, clearAfterMs: 0 },
  VEND_JOURNAL_FAILED: { raiseAfterMs: 0, clearAfterMs: 60_000 },
};

interface AlarmSlot {
  /** What the fleet was told last (the status's alarm list). */
  raised: boolean;
  /** The condition as last observed, and since when (monotonic ms). */
  observed: boolean;
  since: number;
  detail: string | null;
}

export type AlarmBook = Readonly<Record<AlarmCode, AlarmSlot>>;

export interface AlarmChange {
  code: AlarmCode;
  state: 'raised' | 'cleared';
  detail: string | null;
}

export function emptyAlarmBook(nowMs: number): AlarmBook {
  const book = {} as Record<AlarmCode, AlarmSlot>;
  for (const code of ALARM_CODES) book[code] = { raised: false, observed: false, since: nowMs, detail: null };
  return book;
}

/** Records what the condition is now; the time only moves when the condition changes. */
export function observe(
  book: AlarmBook,
  code: AlarmCode,
  active: boolean,
  nowMs: number,
  detail: string | null = null,
): AlarmBook {
  const slot = book[code];
  if (slot.observed === active)
    return active && detail !== null && detail !== slot.detail ? { ...book, [code]: { ...slot, detail } } : book;
  return { ...book, [code]: { ...slot, observed: active, since: nowMs, detail: active ? detail : slot.detail } };
}

/** Raises and clears what has held long enough. */
export function settle(
  book: AlarmBook,
  nowMs: number,
  timing: Record<AlarmCode, AlarmTiming> = ALARM_TIMING,
): { book: AlarmBook; changes: AlarmChange[] } {
  const changes: AlarmChange[] = [];
  let next: Record<AlarmCode, AlarmSlot> | null = null;
  for (const code of ALARM_CODES) {
    const slot = book[code];
    if (slot.observed === slot.raised) continue;
    const wait = slot.observed ? timing[code].raiseAfterMs : timing[code].clearAfterMs;
    if (nowMs - slot.since < wait) continue;
    next ??= { ...book };
    next[code] = { ...slot, raised: slot.observed };
    changes.push({ code, state: slot.observed ? 'raised' : 'cleared', detail: slot.observed ? slot.detail : null });
  }
  return { book: next ?? book, changes };
}

export function raisedCodes(book: AlarmBook): AlarmCode[] {
  return ALARM_CODES.filter((code) => book[code].raised);
}

/** Restores what the fleet was told before a restart (so a restart does not raise everything again). */
export function withRaised(book: AlarmBook, codes: readonly AlarmCode[], nowMs: number): AlarmBook {
  const next = { ...book } as Record<AlarmCode, AlarmSlot>;
  for (const code of codes) next[code] = { raised: true, observed: true, since: nowMs, detail: null };
  return next;
}
