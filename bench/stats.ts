/**
 * Percentiles and summaries for the benchmarks. Nearest-rank percentiles over the sorted samples:
 * the p99 of 2,000 samples is the 1,980th smallest, a value that was actually measured (no
 * interpolation between two samples that may sit on either side of a stall).
 */

/** The q-quantile (0 < q <= 1) of ascending `sorted` by nearest rank; NaN when empty. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (!(q > 0 && q <= 1)) throw new RangeError(`percentile q must be in (0, 1], got ${q}`);
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export interface Summary {
  count: number;
  min: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/** Summary of unsorted samples (the input is not modified). */
export function summarize(samples: readonly number[]): Summary {
  const sorted = Float64Array.from(samples).sort();
  const list = Array.from(sorted);
  const sum = list.reduce((a, b) => a + b, 0);
  return {
    count: list.length,
    min: list.length > 0 ? list[0]! : Number.NaN,
    p50: percentile(list, 0.5),
    p99: percentile(list, 0.99),
    max: list.length > 0 ? list[list.length - 1]! : Number.NaN,
    mean: list.length > 0 ? sum / list.length : Number.NaN,
  };
}

/** Rounds for display and JSON (figures are ms or MB; three decimals keep microseconds). */
export function round(value: number, decimals = 3): number {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}
