/** The activation waiter (src/updates/activation.ts): every phase against every kind of event. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  initialActivation,
  stepActivation,
  type ActivationEvent,
  type ActivationRequest,
  type ActivationState,
} from '../../src/updates/activation.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const LIMITS = { maxDeferralMs: 60_000, holdTimeoutMs: 5_000 };
const UPDATE: ActivationRequest = { kind: 'update', version: '9.1.0', rolloutId: 'r1' };
const RESTART: ActivationRequest = { kind: 'restart', version: '9.0.1', rolloutId: null };

function run(events: ActivationEvent[], from: ActivationState = initialActivation) {
  let state = from;
  const effects = [];
  for (const e of events) {
    const step = stepActivation(state, e, LIMITS);
    state = step.state;
    effects.push(...step.effects);
  }
  return { state, effects };
}

const waiting = (over: Partial<Extract<ActivationState, { phase: 'waiting' }>> = {}): ActivationState => ({
  phase: 'waiting',
  request: UPDATE,
  sinceMs: 0,
  deferred: false,
  waitingFor: null,
  ...over,
});
const holding = (over: Partial<Extract<ActivationState, { phase: 'holding' }>> = {}): ActivationState => ({
  phase: 'holding',
  request: UPDATE,
  sinceMs: 0,
  deferred: false,
  holdSinceMs: 1_000,
  ...over,
});

test('none: only a request starts the wait; facts and ticks change nothing', T, () => {
  assert.deepEqual(
    run([
      { type: 'facts', busy: null, held: true, nowMs: 1 },
      { type: 'tick', nowMs: 10_000_000 },
    ]),
    { state: initialActivation, effects: [] },
  );
  assert.deepEqual(run([{ type: 'request', request: UPDATE, nowMs: 5 }]).state, waiting({ sinceMs: 5 }));
});

test(
  'waiting: busy keeps waiting and remembers what for; idle asks for the hold; nothing activates without it',
  T,
  () => {
    const busy = run([{ type: 'facts', busy: 'session running', held: false, nowMs: 1_000 }], waiting());
    assert.deepEqual(busy, { state: waiting({ waitingFor: 'session running' }), effects: [] });
    const idle = run([{ type: 'facts', busy: null, held: false, nowMs: 2_000 }], waiting());
    assert.deepEqual(idle, { state: holding({ holdSinceMs: 2_000 }), effects: [{ type: 'hold', hold: true }] });
  },
);

test('holding: idle with the hold confirmed activates; busy lets the hold go and waits again', T, () => {
  assert.deepEqual(run([{ type: 'facts', busy: null, held: true, nowMs: 2_000 }], holding()), {
    state: { phase: 'activating', request: UPDATE },
    effects: [{ type: 'activate', request: UPDATE }],
  });
  // A session that slipped in between the idle check and the hold.
  assert.deepEqual(run([{ type: 'facts', busy: 'payment running', held: true, nowMs: 2_000 }], holding()), {
    state: waiting({ waitingFor: 'payment running' }),
    effects: [{ type: 'hold', hold: false }],
  });
  // Idle but the hold not yet confirmed: keep holding, until the hold timeout.
  assert.deepEqual(run([{ type: 'facts', busy: null, held: false, nowMs: 2_000 }], holding()), {
    state: holding(),
    effects: [],
  });
  assert.deepEqual(run([{ type: 'tick', nowMs: 5_999 }], holding()), { state: holding(), effects: [] });
  const timedOut = run([{ type: 'tick', nowMs: 6_000 }], holding());
  assert.equal(timedOut.state.phase, 'waiting');
  assert.deepEqual(timedOut.effects, [{ type: 'hold', hold: false }]);
});

test('the maximum deferral raises UPDATE_DEFERRED once, keeps waiting, and clears it at activation', T, () => {
  const r = run([
    { type: 'request', request: UPDATE, nowMs: 0 },
    { type: 'facts', busy: 'session running', held: false, nowMs: 59_999 },
    { type: 'tick', nowMs: 60_000 },
    { type: 'tick', nowMs: 120_000 },
    { type: 'facts', busy: 'session running', held: false, nowMs: 500_000 },
  ]);
  assert.equal(r.state.phase, 'waiting');
  assert.equal(r.effects.length, 1);
  assert.deepEqual(r.effects[0]!.type, 'deferred');
  assert.match(
    (r.effects[0] as { detail: string }).detail,
    /update to 9\.1\.0 has waited 60 s .*\(session running\); it keeps waiting/,
  );
  assert.ok(!r.effects.some((e) => e.type === 'activate'), 'never a forced activation');
  const done = run(
    [
      { type: 'facts', busy: null, held: false, nowMs: 600_000 },
      { type: 'facts', busy: null, held: true, nowMs: 600_001 },
    ],
    r.state,
  );
  assert.deepEqual(done.effects, [
    { type: 'hold', hold: true },
    { type: 'deferred', active: false, detail: null },
    { type: 'activate', request: UPDATE },
  ]);
});

test(
  'a second request: a newer one replaces, a restart request does not replace an update (whose restart covers it)',
  T,
  () => {
    const newer: ActivationRequest = { kind: 'update', version: '9.2.0', rolloutId: 'r2' };
    for (const from of [waiting(), holding()]) {
      assert.equal(
        (run([{ type: 'request', request: newer, nowMs: 1 }], from).state as { request: ActivationRequest }).request,
        newer,
      );
      assert.equal(
        (run([{ type: 'request', request: RESTART, nowMs: 1 }], from).state as { request: ActivationRequest }).request,
        UPDATE,
      );
    }
    assert.equal(
      (
        run([{ type: 'request', request: UPDATE, nowMs: 1 }], waiting({ request: RESTART })).state as {
          request: ActivationRequest;
        }
      ).request,
      UPDATE,
    );
  },
);

test('activating is final: nothing moves it', T, () => {
  const final: ActivationState = { phase: 'activating', request: UPDATE };
  for (const e of [
    { type: 'request', request: RESTART, nowMs: 1 },
    { type: 'facts', busy: 'x', held: false, nowMs: 1 },
    { type: 'tick', nowMs: 1e9 },
  ] as ActivationEvent[]) {
    assert.deepEqual(stepActivation(final, e, LIMITS), { state: final, effects: [] });
  }
});
