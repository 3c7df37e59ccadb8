/**
 * What the outbox records about a failed attempt (src/ledger/backoff.ts): the error text a
 * technician reads in `qrvend outbox` names the failure, the HTTP status when there was one, and
 * the gateway's decline code and message; a final decline is dead at once, a retryable one waits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeAttempt } from '../../src/ledger/backoff.js';

const policy = { baseMs: 1_000, capMs: 60_000, windowMs: 3_600_000 };
const half = () => 0.5;

test('a transport failure: retried, its text names the failure and the HTTP status when there was one', () => {
  assert.deepEqual(
    judgeAttempt(
      { kind: 'transport', failure: 'http-status', detail: 'bad gateway', httpStatus: 502, elapsedMs: 1 },
      policy,
      1,
      0,
      0,
      half,
    ),
    {
      kind: 'retry',
      atMs: 500,
      error: 'transport http-status (HTTP 502): bad gateway',
      code: null,
    },
  );
  assert.deepEqual(
    judgeAttempt(
      { kind: 'transport', failure: 'timeout', detail: 'no answer', httpStatus: null, elapsedMs: 1 },
      policy,
      2,
      0,
      0,
      half,
    ),
    {
      kind: 'retry',
      atMs: 1_000,
      error: 'transport timeout: no answer',
      code: null,
    },
  );
});

test('a decline: its code and message; final ones are dead at once, retryable ones wait', () => {
  assert.deepEqual(
    judgeAttempt(
      { kind: 'declined', code: 5, message: 'do not honour', response: {}, elapsedMs: 1 },
      policy,
      1,
      0,
      0,
      half,
    ),
    {
      kind: 'dead',
      error: 'declined 5: do not honour',
      code: 5,
    },
  );
  assert.deepEqual(
    judgeAttempt({ kind: 'declined', code: 30, message: null, response: {}, elapsedMs: 1 }, policy, 1, 0, 0, half),
    {
      kind: 'retry',
      atMs: 500,
      error: 'declined 30',
      code: 30,
    },
  );
});
