/**
 * The staged rollout of `qrvend fleet update` (docs/decisions/remote-updates.md, docs/updates.md), as pure
 * functions over the rollout's state: which machines are targets, how big each batch is, what to do
 * next, and when to stop. No I/O and no clock: the time a batch has waited comes in as an input
 * (measured on the monotonic clock by the caller, restarted when a rollout is resumed, because no
 * monotonic instant survives the operator's laptop closing).
 *
 * The state is what the rollout file holds (state-file.ts), so an interrupted rollout resumes from
 * exactly what it knew.
 */
import { z } from 'zod';
import { UPDATE_STATES, type UpdateState } from '../../contract/updates.js';
import { TOPIC_PREFIX, type StatusMessage } from '../../contract/index.js';
import { UpdateManifest } from '../../contract/manifest-schema.js';
import { ROLLOUT_ID } from '../../contract/rollout-id.js';

export const FailureLimit = z.union([
  z.strictObject({ kind: z.literal('count'), n: z.number().int().min(0).max(1_000_000) }),
  z.strictObject({ kind: z.literal('percent'), p: z.number().min(0).max(100) }),
]);
export type FailureLimit = z.infer<typeof FailureLimit>;

export const RolloutPolicy = z.strictObject({
  /** Machines in the first batch. */
  first: z.number().int().min(1).max(100_000),
  /** Each batch is this many times the one before (rounded up). */
  growth: z.number().min(1).max(100),
  /** The rollout stops when the failures are more than this. */
  maxFailures: FailureLimit,
  /** A machine with no outcome this long after its batch was offered counts as a failure. */
  batchTimeoutMs: z
    .number()
    .int()
    .min(1_000)
    .max(7 * 24 * 3600_000),
});
export type RolloutPolicy = z.infer<typeof RolloutPolicy>;

/** How a machine's part of the rollout ended: `healthy` is the one success. */
export const OUTCOMES = ['healthy', 'failed', 'refused', 'rolled-back', 'timed-out'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const Target = z.strictObject({
  machineId: z.string().min(1).max(128),
  /** The batch it was offered in (0-based), null while pending. */
  batch: z.number().int().min(0).nullable(),
  /** pending: not offered yet; offering: the offer is being sent (re-sent on resume); offered: sent. */
  phase: z.enum(['pending', 'offering', 'offered']),
  /** The last update state the machine reported for this rollout. */
  lastState: z.enum(UPDATE_STATES).nullable(),
  outcome: z.enum(OUTCOMES).nullable(),
  detail: z.string().max(512).nullable(),
});
export type Target = z.infer<typeof Target>;

export const RolloutState = z.strictObject({
  v: z.literal(1),
  rolloutId: z.string().regex(ROLLOUT_ID),
  /** The fleet's topic prefix the machines were chosen under (a resume uses it, whatever --prefix says). */
  prefix: z.string().regex(TOPIC_PREFIX),
  manifest: UpdateManifest,
  url: z.string().min(8).max(2048),
  policy: RolloutPolicy,
  createdAt: z.string().max(40),
  targets: z.array(Target).max(100_000),
  skipped: z.array(z.strictObject({ machineId: z.string().max(128), reason: z.string().max(200) })).max(100_000),
  batches: z.array(
    z.strictObject({
      index: z.number().int().min(0),
      machineIds: z.array(z.string().max(128)),
      offeredAt: z.string().max(40),
    }),
  ),
  /** Set once the rollout ended: why, and when (ISO). */
  ended: z
    .strictObject({ how: z.enum(['complete', 'stopped']), reason: z.string().max(512), at: z.string().max(40) })
    .nullable(),
});
export type RolloutState = z.infer<typeof RolloutState>;

const FAILURES: ReadonlySet<Outcome> = new Set(['failed', 'refused', 'rolled-back', 'timed-out']);

/** Parses `--max-failures`: a count (`2`) or a share of the targets (`10%`). */
export function parseFailureLimit(text: string): FailureLimit {
  const percent = /^(\d{1,3}(?:\.\d{1,2})?)%$/.exec(text);
  if (percent) {
    const p = Number(percent[1]);
    if (p > 100) throw new RangeError('--max-failures: a share is at most 100%');
    return { kind: 'percent', p };
  }
  if (/^\d{1,7}$/.test(text)) return { kind: 'count', n: Number(text) };
  throw new RangeError(
    `--max-failures must be a count (e.g. 2) or a share of the machines (e.g. 10%), got "${text.slice(0, 32)}"`,
  );
}

/** The failures allowed before the rollout stops, for this many targets. */
export function allowedFailures(limit: FailureLimit, targets: number): number {
  return limit.kind === 'count' ? limit.n : Math.floor((limit.p * targets) / 100 + 1e-9);
}

/** The size of batch `index` (0-based): `first`, then each `growth` times the one before, rounded up. */
export function batchSize(policy: Pick<RolloutPolicy, 'first' | 'growth'>, index: number): number {
  let size = policy.first;
  for (let i = 0; i < index && size < 1_000_000; i += 1)
    size = Math.max(size + (policy.growth > 1 ? 1 : 0), Math.ceil(size * policy.growth));
  return size;
}

export interface Selection {
  targets: string[];
  skipped: { machineId: string; reason: string }[];
}

/**
 * The machines to offer to, from the retained statuses: online, not already on the version, of the
 * manifest's architecture when their status says theirs. `wanted` = the ids named with --machines,
 * or null for --all (every machine with a status). Named machines keep the operator's order.
 */
export function selectTargets(
  statuses: ReadonlyMap<string, StatusMessage | null>,
  wanted: readonly string[] | null,
  manifest: Pick<UpdateManifest, 'version' | 'arch'>,
): Selection {
  const ids = wanted ?? [...statuses.keys()].sort();
  const targets: string[] = [];
  const skipped: Selection['skipped'] = [];
  for (const machineId of new Set(ids)) {
    const status = statuses.get(machineId) ?? null;
    if (status === null)
      skipped.push({ machineId, reason: 'no retained status under this prefix (never connected, or a wrong id)' });
    else if (!status.online) skipped.push({ machineId, reason: 'offline (its last will): offer it later' });
    else if (status.version === manifest.version)
      skipped.push({ machineId, reason: `already runs ${manifest.version}` });
    else if (status.arch !== undefined && status.arch !== manifest.arch)
      skipped.push({ machineId, reason: `its architecture is ${status.arch}, the manifest's ${manifest.arch}` });
    else targets.push(machineId);
  }
  return { targets, skipped };
}

export function newRollout(input: {
  rolloutId: string;
  prefix: string;
  manifest: UpdateManifest;
  url: string;
  policy: RolloutPolicy;
  selection: Selection;
  nowIso: string;
}): RolloutState {
  return {
    v: 1,
    rolloutId: input.rolloutId,
    prefix: input.prefix,
    manifest: input.manifest,
    url: input.url,
    policy: input.policy,
    createdAt: input.nowIso,
    targets: input.selection.targets.map((machineId) => ({
      machineId,
      batch: null,
      phase: 'pending',
      lastState: null,
      outcome: null,
      detail: null,
    })),
    skipped: input.selection.skipped,
    batches: [],
    ended: null,
  };
}

export function failures(state: RolloutState): number {
  return state.targets.filter((t) => t.outcome !== null && FAILURES.has(t.outcome)).length;
}

export type Step =
  /** Offer to these machines as batch `index` (or again, after a resume, those whose offer was being sent). */
  | { kind: 'offer'; index: number; machineIds: string[] }
  /** The current batch still waits for outcomes. */
  | { kind: 'wait' }
  /** These machines of the current batch had no outcome within the batch timeout. */
  | { kind: 'time-out'; machineIds: string[] }
  | { kind: 'stop'; reason: string }
  | { kind: 'complete'; reason: string };

/**
 * What to do next. Failures beyond the threshold stop the rollout at once (no later batch is
 * offered; machines already offered go on by themselves). A batch is offered only once every
 * machine of the one before has an outcome. `batchWaitedMs`: how long the current batch has waited
 * (since it was offered, or since this process resumed the rollout).
 */
export function nextStep(state: RolloutState, batchWaitedMs: number): Step {
  const limit = allowedFailures(state.policy.maxFailures, state.targets.length);
  const failed = failures(state);
  if (failed > limit)
    return {
      kind: 'stop',
      reason: `${failed} failure${failed === 1 ? '' : 's'}, more than the ${limit} allowed (--max-failures)`,
    };
  const resend = state.targets.filter((t) => t.phase === 'offering' && t.outcome === null);
  if (resend.length > 0)
    return {
      kind: 'offer',
      index: resend[0]!.batch ?? state.batches.length,
      machineIds: resend.map((t) => t.machineId),
    };
  const open = state.targets.filter((t) => t.phase === 'offered' && t.outcome === null);
  if (open.length > 0)
    return batchWaitedMs >= state.policy.batchTimeoutMs
      ? { kind: 'time-out', machineIds: open.map((t) => t.machineId) }
      : { kind: 'wait' };
  const pending = state.targets.filter((t) => t.phase === 'pending');
  if (pending.length === 0) {
    const healthy = state.targets.filter((t) => t.outcome === 'healthy').length;
    return {
      kind: 'complete',
      reason:
        `${healthy} of ${state.targets.length} machines healthy on ` +
        `${state.manifest.version}, ${failed} failed (${limit} allowed)`,
    };
  }
  const index = state.batches.length;
  return { kind: 'offer', index, machineIds: pending.slice(0, batchSize(state.policy, index)).map((t) => t.machineId) };
}

function withTargets(state: RolloutState, change: (t: Target) => Target): RolloutState {
  return { ...state, targets: state.targets.map(change) };
}

/** Marks a batch as being offered (written to the file before any offer leaves, so a resume re-sends it). */
export function startBatch(
  state: RolloutState,
  index: number,
  machineIds: readonly string[],
  nowIso: string,
): RolloutState {
  const ids = new Set(machineIds);
  const known = state.batches.some((b) => b.index === index);
  const next = withTargets(state, (t) =>
    ids.has(t.machineId) && t.phase !== 'offered' ? { ...t, phase: 'offering', batch: index } : t,
  );
  return known
    ? next
    : { ...next, batches: [...next.batches, { index, machineIds: [...machineIds], offeredAt: nowIso }] };
}

/** The offer left (whatever the reply): the machine's outcome now comes from its update events or status. */
export function markOffered(state: RolloutState, machineId: string): RolloutState {
  return withTargets(state, (t) =>
    t.machineId === machineId && t.phase === 'offering' ? { ...t, phase: 'offered' } : t,
  );
}

const OUTCOME_OF: Partial<Record<UpdateState, Outcome>> = {
  healthy: 'healthy',
  failed: 'failed',
  refused: 'refused',
  'rolled-back': 'rolled-back',
};

/**
 * A machine reported an update state for this rollout (an event, its retained status, or an error
 * reply to the offer taken as `refused`). The first outcome stands: a late or repeated report
 * changes nothing. Reports from machines not offered yet are ignored.
 */
export function recordReport(
  state: RolloutState,
  machineId: string,
  reported: UpdateState,
  detail: string | null,
): RolloutState {
  return withTargets(state, (t) => {
    if (t.machineId !== machineId || t.phase === 'pending' || t.outcome !== null) return t;
    const outcome = OUTCOME_OF[reported] ?? null;
    return { ...t, lastState: reported, outcome, detail: detail ?? t.detail };
  });
}

export function recordTimeouts(state: RolloutState, machineIds: readonly string[], timeoutMs: number): RolloutState {
  const ids = new Set(machineIds);
  const detail = `no outcome within ${Math.round(timeoutMs / 1000)} s (--batch-timeout)`;
  return withTargets(state, (t) =>
    ids.has(t.machineId) && t.outcome === null
      ? { ...t, outcome: 'timed-out', detail: t.lastState === null ? detail : `${detail}; last state ${t.lastState}` }
      : t,
  );
}

export function endRollout(
  state: RolloutState,
  how: 'complete' | 'stopped',
  reason: string,
  nowIso: string,
): RolloutState {
  return { ...state, ended: { how, reason, at: nowIso } };
}

/** Counts for the summary line. */
export function tally(state: RolloutState): {
  targets: number;
  healthy: number;
  failed: number;
  inFlight: number;
  notOffered: number;
  skipped: number;
} {
  const t = state.targets;
  return {
    targets: t.length,
    healthy: t.filter((x) => x.outcome === 'healthy').length,
    failed: failures(state),
    inFlight: t.filter((x) => x.phase !== 'pending' && x.outcome === null).length,
    notOffered: t.filter((x) => x.phase === 'pending').length,
    skipped: state.skipped.length,
  };
}
