/**
 * What every benchmark hands back: figures, each measured against its design target (section 7)
 * or marked pending/failed with the reason. A figure is never invented: a benchmark that could not
 * measure reports status `pending` or `error` and pass = null.
 */
import { round, type Summary } from './stats.js';

export type Stat = 'p50' | 'p99' | 'max' | 'rate' | 'value';

/** One condition of a target, e.g. p99 <= 1 ms. `limit` may be derived at run time (1.5x idle). */
export interface Check {
  stat: Stat;
  op: '<=' | '>=';
  limit: number;
  /** How the limit was obtained when it is not a constant of the design, e.g. "1.5 x idle p99". */
  derived?: string;
}

export interface Target {
  /** The design's wording, e.g. "p99 <= 5 ms". */
  text: string;
  checks: Check[];
}

export type FigureStatus = 'measured' | 'pending' | 'error';

export interface Figure {
  id: string;
  what: string;
  unit: string;
  status: FigureStatus;
  /** Why it is pending or failed. */
  reason: string | null;
  samples: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
  rate: number | null;
  value: number | null;
  target: Target;
  /** True when every check holds; null when not measured. */
  pass: boolean | null;
  /** Conditions of the measurement (concurrency, gateway delay, sample counts...). */
  context: Record<string, string | number | boolean | null>;
  /** One line for the table: the floor a ratio was taken against, its spread, where bytes went. */
  detail?: string;
}

interface Measured {
  samples: number;
  summary?: Summary;
  rate?: number;
  value?: number;
}

function statOf(f: Pick<Figure, Stat>, stat: Stat): number | null {
  return f[stat];
}

/** True when every check holds; null for a reference figure (no checks). */
export function judge(figure: Pick<Figure, Stat>, target: Target): boolean | null {
  if (target.checks.length === 0) return null;
  return target.checks.every((c) => {
    const v = statOf(figure, c.stat);
    if (v === null || !Number.isFinite(v) || !Number.isFinite(c.limit)) return false;
    return c.op === '<=' ? v <= c.limit : v >= c.limit;
  });
}

export function measured(
  base: { id: string; what: string; unit: string; target: Target; context?: Figure['context']; detail?: string },
  m: Measured,
): Figure {
  const s = m.summary;
  const figure: Figure = {
    id: base.id,
    what: base.what,
    unit: base.unit,
    status: 'measured',
    reason: null,
    samples: m.samples,
    p50: s ? round(s.p50) : null,
    p99: s ? round(s.p99) : null,
    max: s ? round(s.max) : null,
    rate: m.rate === undefined ? null : round(m.rate, 1),
    value: m.value === undefined ? null : round(m.value),
    target: base.target,
    pass: null,
    context: base.context ?? {},
    ...(base.detail !== undefined ? { detail: base.detail } : {}),
  };
  figure.pass = judge(figure, base.target);
  return figure;
}

export function notMeasured(
  base: { id: string; what: string; unit: string; target: Target; context?: Figure['context'] },
  status: 'pending' | 'error',
  reason: string,
): Figure {
  return {
    id: base.id,
    what: base.what,
    unit: base.unit,
    status,
    reason,
    samples: 0,
    p50: null,
    p99: null,
    max: null,
    rate: null,
    value: null,
    target: base.target,
    pass: null,
    context: base.context ?? {},
  };
}

/** The bench-wide reason for figures that need the daemon while `qrvend run` is a placeholder. */
export const DAEMON_PENDING = 'pending: daemon not built';
