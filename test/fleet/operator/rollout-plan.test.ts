/** The staged rollout's planning (src/fleet/operator/rollout/plan.ts): pure, time fed in. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allowedFailures,
  batchSize,
  markOffered,
  newRollout,
  nextStep,
  parseFailureLimit,
  recordReport,
  recordTimeouts,
  selectTargets,
  startBatch,
  type RolloutPolicy,
  type RolloutState,
} from '../../../src/fleet/operator/rollout/index.js';
import type { StatusMessage } from '../../../src/fleet/contract/index.js';
import type { UpdateManifest } from '../../../src/fleet/contract/manifest-schema.js';
import { onlineStatus } from './fixtures.js';

const MANIFEST: UpdateManifest = {
  version: '1.1.0',
  arch: 'arm64',
  artifact: 'qrvend_1.1.0_arm64.tar.gz',
  size: 10,
  sha256: 'b'.repeat(64),
  minVersion: '1.0.0',
  signature: { keyId: 'k', issuedAt: 1, expiresAt: 2, nonce: 'n'.repeat(22), sig: `${'A'.repeat(86)}==` },
};

function rollout(ids: string[], policy: Partial<RolloutPolicy> = {}): RolloutState {
  return newRollout({
    rolloutId: 'r1',
    prefix: 'qrvend',
    manifest: MANIFEST,
    url: 'https://example.invalid/a',
    policy: { first: 1, growth: 2, maxFailures: { kind: 'count', n: 0 }, batchTimeoutMs: 60_000, ...policy },
    selection: { targets: ids, skipped: [] },
    nowIso: '2026-11-26T00:00:00Z',
  });
}

/** Offers what nextStep says and marks every machine of the batch offered. */
function offerNext(state: RolloutState): { state: RolloutState; ids: string[] } {
  const step = nextStep(state, 0);
  assert.equal(step.kind, 'offer', JSON.stringify(step));
  if (step.kind !== 'offer') throw new Error('unreachable');
  let s = startBatch(state, step.index, step.machineIds, 'now');
  for (const id of step.machineIds) s = markOffered(s, id);
  return { state: s, ids: step.machineIds };
}

test(
  'batch sizes: first, then growing by the factor (rounded up, always growing); growth 1 keeps the size',
  { timeout: 5_000 },
  () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((i) => batchSize({ first: 1, growth: 2 }, i)),
      [1, 2, 4, 8, 16],
    );
    assert.deepEqual(
      [0, 1, 2, 3].map((i) => batchSize({ first: 5, growth: 1.5 }, i)),
      [5, 8, 12, 18],
    );
    assert.deepEqual(
      [0, 1, 2].map((i) => batchSize({ first: 1, growth: 1.1 }, i)),
      [1, 2, 3],
    );
    assert.deepEqual(
      [0, 1, 2].map((i) => batchSize({ first: 3, growth: 1 }, i)),
      [3, 3, 3],
    );
  },
);

test(
  '--max-failures: a count or a share of the targets (rounded down); anything else refused',
  { timeout: 5_000 },
  () => {
    assert.deepEqual(parseFailureLimit('2'), { kind: 'count', n: 2 });
    assert.deepEqual(parseFailureLimit('10%'), { kind: 'percent', p: 10 });
    assert.equal(allowedFailures({ kind: 'percent', p: 10 }, 25), 2);
    assert.equal(allowedFailures({ kind: 'percent', p: 10 }, 9), 0);
    assert.equal(allowedFailures({ kind: 'percent', p: 10 }, 10), 1);
    for (const bad of ['-1', '10 %', '101%', 'x', '1.5']) assert.throws(() => parseFailureLimit(bad), RangeError, bad);
  },
);

test(
  'targets: online machines not on the version and of the right architecture; named ones in the given order',
  { timeout: 5_000 },
  () => {
    const statuses = new Map<string, StatusMessage | null>([
      ['m3', onlineStatus('m3', { version: '1.0.0' })],
      ['m1', onlineStatus('m1', { version: '1.0.0', arch: 'arm64' })],
      ['m2', onlineStatus('m2', { version: '1.1.0' })],
      ['m4', { online: false }],
      ['m5', onlineStatus('m5', { version: '1.0.0', arch: 'armhf' })],
      ['m6', null],
    ]);
    const all = selectTargets(statuses, null, MANIFEST);
    assert.deepEqual(all.targets, ['m1', 'm3']);
    assert.deepEqual(
      all.skipped.map((s) => s.machineId),
      ['m2', 'm4', 'm5', 'm6'],
    );
    assert.match(all.skipped[0]!.reason, /already runs 1\.1\.0/);
    assert.match(all.skipped[1]!.reason, /offline/);
    assert.match(all.skipped[2]!.reason, /armhf/);
    const named = selectTargets(statuses, ['m3', 'nope', 'm1', 'm3'], MANIFEST);
    assert.deepEqual(named.targets, ['m3', 'm1']);
    assert.deepEqual(
      named.skipped.map((s) => s.machineId),
      ['nope'],
    );
  },
);

test('a batch waits for every outcome before the next is offered; all healthy completes', { timeout: 5_000 }, () => {
  let s = rollout(['a', 'b', 'c', 'd']);
  let o = offerNext(s);
  assert.deepEqual(o.ids, ['a']);
  s = recordReport(o.state, 'a', 'downloading', null);
  assert.deepEqual(nextStep(s, 1_000), { kind: 'wait' });
  s = recordReport(s, 'a', 'healthy', null);
  o = offerNext(s);
  assert.deepEqual(o.ids, ['b', 'c']);
  s = recordReport(o.state, 'b', 'healthy', null);
  assert.deepEqual(nextStep(s, 0), { kind: 'wait' });
  s = recordReport(s, 'c', 'healthy', null);
  o = offerNext(s);
  assert.deepEqual(o.ids, ['d']);
  s = recordReport(o.state, 'd', 'healthy', null);
  const end = nextStep(s, 0);
  assert.equal(end.kind, 'complete');
  assert.match((end as { reason: string }).reason, /^4 of 4 machines healthy on 1\.1\.0, 0 failed/);
});

test(
  'failures past the threshold stop at once, even with machines of the batch still in flight',
  { timeout: 5_000 },
  () => {
    let s = rollout(['a', 'b', 'c', 'd', 'e', 'f', 'g'], { first: 1, growth: 3, maxFailures: { kind: 'count', n: 1 } });
    s = recordReport(offerNext(s).state, 'a', 'healthy', null);
    s = offerNext(s).state;
    s = recordReport(s, 'b', 'failed', 'hash');
    assert.deepEqual(nextStep(s, 0), { kind: 'wait' }, 'one failure is allowed');
    s = recordReport(s, 'c', 'rolled-back', 'trial');
    const step = nextStep(s, 0);
    assert.equal(step.kind, 'stop');
    assert.match((step as { reason: string }).reason, /^2 failures, more than the 1 allowed/);
    // refused counts too
    let r = rollout(['a', 'b']);
    r = recordReport(offerNext(r).state, 'a', 'refused', 'UNAUTHORIZED');
    assert.equal(nextStep(r, 0).kind, 'stop');
  },
);

test('no outcome within the batch timeout: timed out (a failure), from the time fed in', { timeout: 5_000 }, () => {
  let s = rollout(['a', 'b', 'c'], { first: 2, maxFailures: { kind: 'count', n: 1 }, batchTimeoutMs: 10_000 });
  s = offerNext(s).state;
  s = recordReport(s, 'a', 'healthy', null);
  s = recordReport(s, 'b', 'waiting', null);
  assert.deepEqual(nextStep(s, 9_999), { kind: 'wait' });
  assert.deepEqual(nextStep(s, 10_000), { kind: 'time-out', machineIds: ['b'] });
  s = recordTimeouts(s, ['b'], 10_000);
  assert.equal(s.targets[1]!.outcome, 'timed-out');
  assert.match(s.targets[1]!.detail ?? '', /no outcome within 10 s .*last state waiting/);
  // A late report changes nothing: the first outcome stands.
  s = recordReport(s, 'b', 'healthy', null);
  assert.equal(s.targets[1]!.outcome, 'timed-out');
  assert.deepEqual(offerNext(s).ids, ['c']);
});

test(
  'machines whose offer was being sent when the run stopped are ' +
    'offered again first; reports before an offer are ignored',
  { timeout: 5_000 },
  () => {
    let s = rollout(['a', 'b', 'c'], { first: 2 });
    s = startBatch(s, 0, ['a', 'b'], 'now');
    s = markOffered(s, 'a');
    assert.deepEqual(nextStep(s, 0), { kind: 'offer', index: 0, machineIds: ['b'] });
    s = startBatch(s, 0, ['b'], 'again');
    assert.equal(s.batches.length, 1, 'the batch is not counted twice');
    s = recordReport(s, 'c', 'healthy', null);
    assert.equal(s.targets[2]!.outcome, null);
  },
);
