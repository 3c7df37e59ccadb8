/**
 * Fault injection: each request draws from a seeded PRNG, so a failing chaos run replays
 * exactly with the same seed. Faults are checked in order; the first that fires wins.
 */
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { GATEWAY_OPERATIONS } from '../../gateway/protocol/index.js';
import type { GatewayOperation } from '../../gateway/outcome.js';
import { seededRandom } from '../seeded-random.js';

export const FAULT_KINDS = ['http500', 'reset-before', 'reset-after', 'hang', 'not-json', 'bad-schema'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/**
 * When each fault strikes relative to the gateway's own work, which decides what a client may
 * assume: before = nothing was recorded; after = the ledger changed but the answer was lost or
 * garbled (the case that makes idempotent retries necessary).
 */
export const FAULT_TIMING: Readonly<Record<FaultKind, 'before' | 'after'>> = {
  http500: 'before',
  'reset-before': 'before',
  hang: 'before',
  'reset-after': 'after',
  'not-json': 'after',
  'bad-schema': 'after',
};

export interface FaultSpec {
  kind: FaultKind;
  /** Probability 0..1 that a matching request gets this fault. */
  rate: number;
  /** Only these operations; absent = all. */
  ops?: GatewayOperation[];
  /** Fire at most this many times; absent = unlimited. */
  times?: number;
}

/** Parses the CLI form `KIND:RATE[:Op,Op...]`, e.g. `reset-after:0.2:Settlement,Cancel`. */
export function parseFaultFlag(text: string): FaultSpec {
  const [kind, rateText, opsText, ...rest] = text.split(':');
  const usage = `--fault ${text}: expected KIND:RATE[:Op,Op], KIND one of ${FAULT_KINDS.join(', ')}, RATE 0..1`;
  if (rest.length > 0 || kind === undefined || rateText === undefined)
    throw new QrvendError(ErrorCodes.CLI_USAGE, usage);
  if (!(FAULT_KINDS as readonly string[]).includes(kind))
    throw new QrvendError(ErrorCodes.CLI_USAGE, `${usage} (unknown kind "${kind}")`);
  const rate = Number(rateText);
  if (rateText.trim() === '' || !Number.isFinite(rate) || rate < 0 || rate > 1)
    throw new QrvendError(ErrorCodes.CLI_USAGE, `${usage} (bad rate "${rateText}")`);
  const spec: FaultSpec = { kind: kind as FaultKind, rate };
  if (opsText !== undefined && opsText !== '') {
    const ops = opsText.split(',');
    for (const op of ops) {
      if (!(GATEWAY_OPERATIONS as readonly string[]).includes(op))
        throw new QrvendError(ErrorCodes.CLI_USAGE, `${usage} (unknown operation "${op}")`);
    }
    spec.ops = ops as GatewayOperation[];
  }
  return spec;
}

export class FaultInjector {
  private faults: FaultSpec[] = [];
  private fired = new Map<FaultSpec, number>();
  private random: () => number;
  readonly counts: Record<FaultKind, number> = {
    http500: 0,
    'reset-before': 0,
    'reset-after': 0,
    hang: 0,
    'not-json': 0,
    'bad-schema': 0,
  };

  constructor(faults: FaultSpec[] = [], seed = 1) {
    this.random = seededRandom(seed);
    this.set(faults, seed);
  }

  /** Replaces the active faults; a seed restarts the random sequence. */
  set(faults: FaultSpec[], seed?: number): void {
    this.faults = faults.map((f) => ({ ...f }));
    this.fired.clear();
    if (seed !== undefined) this.random = seededRandom(seed);
  }

  active(): FaultSpec[] {
    return this.faults.map((f) => ({ ...f }));
  }

  /** The fault this request gets, or null. Every matching fault draws, so rates stay independent. */
  draw(op: GatewayOperation): FaultKind | null {
    let chosen: FaultKind | null = null;
    for (const f of this.faults) {
      if (f.ops !== undefined && !f.ops.includes(op)) continue;
      const used = this.fired.get(f) ?? 0;
      if (f.times !== undefined && used >= f.times) continue;
      const hit = this.random() < f.rate;
      if (hit && chosen === null) {
        chosen = f.kind;
        this.fired.set(f, used + 1);
      }
    }
    if (chosen !== null) this.counts[chosen] += 1;
    return chosen;
  }
}
