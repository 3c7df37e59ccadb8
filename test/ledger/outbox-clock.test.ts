/**
 * The outbox keeps its rows' place in time when the wall clock moves (src/ledger/outbox.ts):
 * a measured step shifts every pending row by exactly that step (rebase), and at start a due time
 * beyond the longest backoff, or a window that starts in the future, is pulled in to now
 * (clampFuture). Rows already done are never touched. A retry pushed hours away, or a window
 * ended early, would delay or drop a Settlement.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cancelBody, openTest, withLedger } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

function enqueue(ledger: ReturnType<typeof openTest>, txId: string): number {
  ledger.acceptStart({ txId, appUserId: 'u', balance: null });
  ledger.cancelAfterAuthTimeout(txId, cancelBody(txId, { IsGatewayTimeout: true }, 3));
  const row = ledger.outbox.list({ limit: 100 }).find((r) => r.txId === txId);
  assert.ok(row);
  return row.id;
}

test(
  'rebase shifts pending rows by the step, both ways, and leaves done rows alone',
  { timeout: TEST_DEADLINE_MS },
  () => {
    withLedger((ledger, clock) => {
      const t0 = clock.now();
      const a = enqueue(ledger, 'TX-CLOCK-00001');
      const b = enqueue(ledger, 'TX-CLOCK-00002');
      ledger.outbox.markDelivered(ledger.outbox.get(b)!, t0);
      assert.equal(ledger.outbox.rebase(60_000), 1, 'one pending row moved');
      assert.equal(ledger.outbox.get(a)!.nextAttemptAtMs, t0 + 60_000);
      assert.equal(ledger.outbox.get(a)!.windowStartedAtMs, t0 + 60_000);
      assert.equal(ledger.outbox.get(b)!.nextAttemptAtMs, t0, 'a done row keeps its times');
      assert.equal(ledger.outbox.rebase(-90_000), 1);
      assert.equal(ledger.outbox.get(a)!.nextAttemptAtMs, t0 - 30_000);
      assert.equal(ledger.outbox.get(a)!.windowStartedAtMs, t0 - 30_000);
    });
  },
);

test(
  'clampFuture pulls a due time beyond the longest backoff, or a future window, in to now; nothing else',
  { timeout: TEST_DEADLINE_MS },
  () => {
    withLedger((ledger, clock) => {
      const t0 = clock.now();
      const id = enqueue(ledger, 'TX-CLOCK-00003');
      assert.equal(ledger.outbox.clampFuture(t0, 60_000), 0, 'due now, window started now: nothing to do');
      // The clock went back an hour while the daemon was down: the row is due an hour "from now".
      const back = t0 - 3_600_000;
      assert.equal(ledger.outbox.clampFuture(back, 60_000), 1);
      assert.equal(ledger.outbox.get(id)!.nextAttemptAtMs, back);
      assert.equal(ledger.outbox.get(id)!.windowStartedAtMs, back);
      // Within the longest backoff and a past window: left as it is.
      ledger.outbox.rebase(30_000);
      assert.equal(ledger.outbox.clampFuture(back + 30_000, 60_000), 0);
      assert.equal(ledger.outbox.get(id)!.nextAttemptAtMs, back + 30_000);
    });
  },
);
