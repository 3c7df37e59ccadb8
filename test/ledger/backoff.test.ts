import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffCeilingMs, backoffDelayMs, judgeAttempt, type BackoffPolicy } from '../../src/ledger/index.js';
import type { GatewayOutcome } from '../../src/gateway/outcome.js';

const policy: BackoffPolicy = { baseMs: 1000, capMs: 300_000, windowMs: 72 * 3_600_000 };

const transport: GatewayOutcome<unknown> = {
  kind: 'transport',
  failure: 'timeout',
  detail: 'no answer',
  httpStatus: null,
  elapsedMs: 8000,
};
const declined = (code: number): GatewayOutcome<unknown> => ({
  kind: 'declined',
  code,
  message: 'x',
  response: {},
  elapsedMs: 1,
});

test('the ceiling doubles per failure from the base and stops at the cap', () => {
  const ceilings = Array.from({ length: 12 }, (_, i) => backoffCeilingMs(policy, i + 1));
  assert.deepEqual(ceilings, [1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000, 300000, 300000, 300000]);
  assert.equal(backoffCeilingMs(policy, 5000), 300_000, 'huge failure counts do not overflow');
});

test('full jitter draws uniformly below the ceiling', () => {
  assert.equal(
    backoffDelayMs(policy, 3, () => 0),
    0,
  );
  assert.equal(
    backoffDelayMs(policy, 3, () => 0.5),
    2000,
  );
  assert.equal(
    backoffDelayMs(policy, 3, () => 0.999999),
    3999,
  );
  assert.equal(
    backoffDelayMs(policy, 20, () => 0.5),
    150_000,
  );
});

test('transport failures and declines 6, 30, 992, 999 are retried; other declines are dead', () => {
  const now = 1_000_000;
  for (const outcome of [transport, declined(6), declined(30), declined(992), declined(999)]) {
    const v = judgeAttempt(outcome, policy, 2, now, now, () => 0.5);
    assert.deepEqual(v.kind, 'retry');
    assert.equal(v.kind === 'retry' && v.atMs, now + 1000);
  }
  for (const code of [1, 2, 5, 8, 10, 993, 997, 998]) {
    const v = judgeAttempt(declined(code), policy, 1, now, now, () => 0.5);
    assert.equal(v.kind, 'dead', `code ${code}`);
    assert.equal(v.kind === 'dead' && v.code, code);
  }
  assert.deepEqual(judgeAttempt({ kind: 'approved', response: {}, elapsedMs: 1 }, policy, 1, now, now, Math.random), {
    kind: 'delivered',
  });
});

test('the window bounds the retries: the last attempt lands on its end, after which the row is dead', () => {
  const start = 0;
  const end = policy.windowMs;
  const nearEnd = judgeAttempt(transport, policy, 40, start, end - 10, () => 0.99);
  assert.equal(nearEnd.kind === 'retry' && nearEnd.atMs, end, 'pulled in to the window end');
  const atEnd = judgeAttempt(transport, policy, 41, start, end, () => 0.99);
  assert.equal(atEnd.kind, 'dead');
  assert.match(atEnd.kind === 'dead' ? atEnd.error : '', /retry window exhausted after 41 attempts/);
});
