/**
 * Latency as a ratio to a floor measured in the same run (docs/decisions/targets.md). The floor and the
 * subject are measured in alternating blocks so that both see the same machine noise; the judged
 * figure is p99 of all subject samples over p99 of all floor samples, and the spread of the
 * per-block ratios says how steady that is. Where the floor is a cost the figure contains (the
 * Start's two fsyncs), the figure is judged beyond it instead: its percentile minus the floor's.
 */
import { percentile, summarize } from './stats.js';

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

export interface BeyondFloor {
  /** p50 and p99 of the subject minus the same percentile of the floor, ms. */
  p50: number;
  p99: number;
  floorP50: number;
  floorP99: number;
}

/**
 * Each percentile of the subject minus the same percentile of the floor (as the ratios take p99
 * over p99). Not a difference per sample: a slow sync inside one Start and a fast one in the floor
 * pair beside it are independent draws, and their difference would hide the tail of both.
 */
export function beyondFloor(subject: readonly number[], floor: readonly number[]): BeyondFloor {
  const s = summarize(subject);
  const f = summarize(floor);
  return { p50: s.p50 - f.p50, p99: s.p99 - f.p99, floorP50: f.p50, floorP99: f.p99 };
}
