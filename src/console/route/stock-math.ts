/**
 * The arithmetic of stock, visits and pick lists (docs/console.md, "A day on the route"), pure:
 * every time comes in as epoch milliseconds, every count is a whole number of items.
 *
 * - A selection's level is set by a fill and lowered by every vend the console learns of: the QR
 *   sales and cash sales the machine publishes, as they come.
 * - A DEX audit is the authority over the interval it covers (from the previous read to this one):
 *   its per-selection vend count (PA2) also counts what qrvend never saw (coins, another card
 *   reader). What it counted beyond (or short of) our own events in that interval is applied to
 *   the level. When the selection was filled inside the interval, only the share of that difference
 *   after the fill counts, taken as spread evenly over the interval (rounded to the nearest item).
 * - The sales rate is the vends of the current fill cycle and the one before it over their time
 *   together, at least one day: recent, and steady right after a fill.
 */

export const DAY_MS = 24 * 3600_000;

export interface AuditInterval {
  /** The previous read (the interval's start) and this read, machine clock. */
  fromMs: number;
  toMs: number;
}

/**
 * How many items the audit removes from a selection's level beyond what our events already did:
 * `dexVends - ourVends` in the interval, the part after `fillAtMs` when the fill lies inside it,
 * nothing when the fill came after the read. Negative: the audit counted fewer vends than we did.
 */
export function auditCorrection(
  interval: AuditInterval,
  dexVends: number,
  ourVends: number,
  fillAtMs: number | null,
): number {
  const difference = dexVends - ourVends;
  if (fillAtMs === null || fillAtMs <= interval.fromMs) return difference;
  if (fillAtMs >= interval.toMs) return 0;
  const share = (interval.toMs - fillAtMs) / (interval.toMs - interval.fromMs);
  return Math.round(difference * share);
}

export interface RateInputs {
  /** Vends of the fill cycle before the current one, and its length (0, 0: none known). */
  previousVends: number;
  previousMs: number;
  /** Vends since the current cycle began (the last fill, or the first vend seen). */
  currentVends: number;
  sinceMs: number;
}

/** Vends per day. */
export function salesRatePerDay(r: RateInputs, nowMs: number): number {
  const spanMs = Math.max(DAY_MS, r.previousMs + Math.max(0, nowMs - r.sinceMs));
  return ((r.previousVends + r.currentVends) * DAY_MS) / spanMs;
}

/** The level expected at `atMs` at `ratePerDay` from `level` now; never below 0. */
export function predictedLevel(level: number, ratePerDay: number, nowMs: number, atMs: number): number {
  const days = Math.max(0, atMs - nowMs) / DAY_MS;
  return Math.max(0, level - ratePerDay * days);
}

/** Days until the selection is empty at its rate (null: it does not sell). */
export function daysToEmpty(level: number, ratePerDay: number): number | null {
  if (ratePerDay <= 0) return null;
  return Math.max(0, level) / ratePerDay;
}

export interface SelectionState {
  machineId: string;
  selection: number;
  productCode: string;
  capacity: number;
  par: number;
  /** Refill when the level is below this. */
  threshold: number;
  level: number;
  ratePerDay: number;
}

/**
 * Whether a selection calls for a visit on the day whose visit is at `visitMs`: below its
 * threshold now, or predicted empty before the next planned visit after that one.
 */
export function selectionNeedsVisit(s: SelectionState, nowMs: number, nextVisitMs: number): boolean {
  if (s.level < s.threshold) return true;
  return predictedLevel(s.level, s.ratePerDay, nowMs, nextVisitMs) <= 0 && s.ratePerDay > 0;
}

/** How many to put in at the visit: par minus the level predicted then, whole items (rounded down level). */
export function toBring(s: SelectionState, nowMs: number, visitMs: number): number {
  const expected = Math.floor(predictedLevel(s.level, s.ratePerDay, nowMs, visitMs));
  return Math.max(0, s.par - expected);
}

export interface PickLine {
  productCode: string;
  quantity: number;
  /** How many selections of the route it fills. */
  selections: number;
}

/** Per product, how many to bring for the selections given (summed over the route), largest first. */
export function pickList(selections: readonly SelectionState[], nowMs: number, visitMs: number): PickLine[] {
  const byProduct = new Map<string, PickLine>();
  for (const s of selections) {
    const n = toBring(s, nowMs, visitMs);
    if (n === 0) continue;
    const line = byProduct.get(s.productCode) ?? { productCode: s.productCode, quantity: 0, selections: 0 };
    line.quantity += n;
    line.selections += 1;
    byProduct.set(s.productCode, line);
  }
  return [...byProduct.values()].sort((a, b) => b.quantity - a.quantity || (a.productCode < b.productCode ? -1 : 1));
}

/** Why a fill count is refused, or null: whole, not below zero, not above the selection's capacity. */
export function fillProblem(selection: number, count: number, capacity: number): string | null {
  if (!Number.isSafeInteger(count)) return `selection ${selection}: the count must be a whole number`;
  if (count < 0) return `selection ${selection}: a count below zero (${count}) cannot be filled`;
  if (count > capacity) return `selection ${selection}: ${count} is more than its capacity of ${capacity}`;
  return null;
}

/** The next planned visit strictly after `dayMs` (a UTC midnight) on the route's weekdays (0 = Sunday). */
export function nextVisitAfter(dayMs: number, weekdays: readonly number[]): number {
  for (let i = 1; i <= 7; i++) {
    const d = dayMs + i * DAY_MS;
    if (weekdays.length === 0 || weekdays.includes(new Date(d).getUTCDay())) return d;
  }
  return dayMs + 7 * DAY_MS;
}
