/**
 * Sales over an interval from two audits' lifetime counters (docs/decisions/machine-audit.md). Only the "since
 * initialisation" counters are used: the "since last reset" ones are cleared by some VMCs after
 * every read (and by a service-mode reset), so their difference means nothing. A lifetime counter
 * that went down, a changed machine serial, or a jump no machine could vend in the time between
 * the reads ends the series: the next interval starts from this audit, and the reason is said.
 * Pure: the caller passes both snapshots and both read times.
 */
import type { Figures, ParsedAudit } from '../file/index.js';

/** What one usable audit leaves for the next one to compare with. */
export interface CounterSnapshot {
  serial: string | null;
  paid: Figures;
  cash: Figures;
  cashless1: Figures;
  cashless2: Figures;
  /** Lifetime paid vends per selection (PA2, else the sum of its PA7 lines). */
  products: Record<string, number>;
  /** The highest price in the file (PA1, PA7), minor units; bounds a plausible value per vend. */
  maxPrice: number | null;
}

export interface IntervalSales {
  paid: Figures;
  cash: Figures;
  cashless1: Figures;
  cashless2: Figures;
  products: Record<string, number>;
}

export type Interval =
  | { kind: 'first'; reason: string }
  | { kind: 'new-series'; reason: string }
  | { kind: 'sales'; elapsedMs: number; sales: IntervalSales };

/**
 * Sanity limits: no vending machine completes a vend in under MIN_SECONDS_PER_VEND (select,
 * pay, dispense); SLACK_VENDS absorbs wall-clock error between the two read times.
 */
export const MIN_SECONDS_PER_VEND = 5;
export const SLACK_VENDS = 50;

const MAX_SELECTIONS = 1000;
const EMPTY: Figures = { value: null, count: null };

export function snapshotOf(audit: ParsedAudit): CounterSnapshot {
  const products: Record<string, number> = {};
  let kept = 0;
  let maxPrice: number | null = null;
  const price = (p: number | null) => {
    if (p !== null && (maxPrice === null || p > maxPrice)) maxPrice = p;
  };
  for (const p of audit.products) {
    price(p.price);
    for (const d of p.byDevice) price(d.price);
    const count =
      p.paid?.sinceInit.count ??
      (p.byDevice.length > 0 && p.byDevice.every((d) => d.totals.sinceInit.count !== null)
        ? p.byDevice.reduce((s, d) => s + d.totals.sinceInit.count!, 0)
        : null);
    // A machine has at most a few hundred selections; more is a broken file, not worth storing per read.
    if (count !== null && kept < MAX_SELECTIONS) {
      products[p.selection] = count;
      kept++;
    }
  }
  return {
    serial: audit.machine.serial,
    paid: audit.paid?.sinceInit ?? EMPTY,
    cash: audit.cash.sales?.sinceInit ?? EMPTY,
    cashless1: audit.cashless1?.sinceInit ?? EMPTY,
    cashless2: audit.cashless2?.sinceInit ?? EMPTY,
    products,
    maxPrice,
  };
}

const FIGURES = [
  ['paid', 'VA1'],
  ['cash', 'CA2'],
  ['cashless1', 'DA2'],
  ['cashless2', 'DB2'],
] as const;

export function intervalSales(
  prev: { snapshot: CounterSnapshot; atMs: number } | null,
  cur: { snapshot: CounterSnapshot; atMs: number },
): Interval {
  if (prev === null) return { kind: 'first', reason: 'the first audit read: the series starts here' };
  const a = prev.snapshot;
  const b = cur.snapshot;
  if (a.serial !== null && b.serial !== null && a.serial !== b.serial) {
    return {
      kind: 'new-series',
      reason:
        `the machine serial changed from ${a.serial} to ${b.serial}: ` +
        `another machine (or board) answers on this DEX line`,
    };
  }
  const elapsedMs = Math.max(0, cur.atMs - prev.atMs);
  const maxVends = Math.floor(elapsedMs / 1000 / MIN_SECONDS_PER_VEND) + SLACK_VENDS;
  const maxPrice = Math.max(a.maxPrice ?? 0, b.maxPrice ?? 0) || null;
  const sales = { products: {} } as IntervalSales;
  for (const [key, tag] of FIGURES) {
    const d = delta(a[key], b[key]);
    if (d.count !== null && d.count < 0) return wentDown(`${tag}02 (vends)`, a[key].count!, b[key].count!);
    if (d.value !== null && d.value < 0) return wentDown(`${tag}01 (value)`, a[key].value!, b[key].value!);
    if (d.count !== null && d.count > maxVends) {
      return {
        kind: 'new-series',
        reason:
          `${tag}02 jumped by ${d.count} vends in ${Math.round(elapsedMs / 60_000)} ` +
          `min, more than a machine can vend (at most ${maxVends}): counters of ` +
          `another board or a restored memory; the series starts again here`,
      };
    }
    if (d.value !== null && d.count !== null && maxPrice !== null && d.value > d.count * maxPrice) {
      return {
        kind: 'new-series',
        reason:
          `${tag}01 grew by ${d.value} for ${d.count} vends, more than the ` +
          `highest price (${maxPrice}) allows: the series starts again here`,
      };
    }
    sales[key] = d;
  }
  for (const [selection, count] of Object.entries(b.products)) {
    const before = a.products[selection];
    if (before === undefined) continue;
    if (count < before) return wentDown(`selection ${selection}'s vends (PA2/PA7)`, before, count);
    sales.products[selection] = count - before;
  }
  return { kind: 'sales', elapsedMs, sales };
}

function delta(a: Figures, b: Figures): Figures {
  return {
    value: a.value === null || b.value === null ? null : b.value - a.value,
    count: a.count === null || b.count === null ? null : b.count - a.count,
  };
}

function wentDown(what: string, before: number, after: number): Interval {
  return {
    kind: 'new-series',
    reason:
      `${what} went down from ${before} to ${after}: the VMC's control board was swapped or its lifetime ` +
      `counters were cleared; the series starts again here, sales over this interval are unknown`,
  };
}
