/**
 * Latency as a ratio to a floor measured in the same run (design section 7). The floor and the
 * subject are measured in alternating blocks so that both see the same machine noise; the judged
 * figure is p99 of all subject samples over p99 of all floor samples, and the spread of the
 * per-block ratios says how steady that is.
 */
import { percentile } from './stats.js';

/** One floor block and the subject block that followed it. */
export interface BlockPair {
  floor: readonly number[];
  subject: readonly number[];
}

export interface RatioSpread {
  /** p(q) of all subject samples / p(q) of all floor samples. */
  pooled: number;
  floorQ: number;
  subjectQ: number;
  /** Ratio of each block pair that has samples on both sides, in block order. */
  blocks: number[];
  median: number;
  min: number;
  max: number;
}

const sortedCopy = (xs: readonly number[]) => Array.from(Float64Array.from(xs).sort());

/** Ratios at quantile `q` (0.99 = p99); NaN members when a side has no samples. */
export function ratioSpread(pairs: readonly BlockPair[], q = 0.99): RatioSpread {
  const floorAll = sortedCopy(pairs.flatMap((p) => p.floor));
  const subjectAll = sortedCopy(pairs.flatMap((p) => p.subject));
  const floorQ = percentile(floorAll, q);
  const subjectQ = percentile(subjectAll, q);
  const blocks = pairs
    .filter((p) => p.floor.length > 0 && p.subject.length > 0)
    .map((p) => percentile(sortedCopy(p.subject), q) / percentile(sortedCopy(p.floor), q));
  const sortedBlocks = sortedCopy(blocks);
  return {
    pooled: subjectQ / floorQ,
    floorQ,
    subjectQ,
    blocks,
    median: percentile(sortedBlocks, 0.5),
    min: sortedBlocks.length > 0 ? sortedBlocks[0]! : Number.NaN,
    max: sortedBlocks.length > 0 ? sortedBlocks[sortedBlocks.length - 1]! : Number.NaN,
  };
}
