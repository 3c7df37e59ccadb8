/**
 * Two console instances on one database (two connections, two workers) share the delivery queue:
 * each delivery is made by exactly one of them (SQLite, and PostgreSQL with FOR UPDATE SKIP
 * LOCKED), and a claim whose instance died is taken over after its lease with the same id.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { enqueue, claimDue } from '../../../src/console/store/delivery-queue.js';
import { openStore } from '../../../src/console/store/open.js';
import { addEndpoint } from '../../../src/console/store/webhook-queries.js';
import { newWebhookSecret } from '../../../src/console/deliveries/signing.js';
import { DATABASES, openDatabase, stopDatabases } from '../store/databases.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { TestClock, testWorker } from './support.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

after(stopDatabases);

for (const kind of DATABASES) {
  test(`${kind}: two instances on one database make each delivery once`, { timeout: TEST_DEADLINE_MS }, async (t) => {
    const store = await openDatabase(t, kind);
    if (store === null) return;
    const other = await openStore(store.target);
    const secret = newWebhookSecret();
    const receiver = await startReceiver(secret);
    try {
      const clock = new TestClock(Date.now());
      const endpoint = await addEndpoint(
        store.db,
        { owner: 'ana', url: receiver.url, secret, events: false, alerts: true, from: 'now' },
        '',
      );
      const n = 40;
      for (let i = 0; i < n; i++) {
        const payload = JSON.stringify({ type: 'alert.raised', timestamp: '', data: { i } });
        await enqueue(
          store.db,
          { id: `msg_${i}`, channel: 'webhook', kind: 'alert', endpoint_id: endpoint, payload },
          clock.ms,
        );
      }
      const a = testWorker(store, clock, { instance: 'a', concurrency: 3 });
      const b = testWorker(other, clock, { instance: 'b', concurrency: 3 });
      const drain = async (w: typeof a) => {
        while ((await w.runOnce()) > 0);
      };
      await Promise.all([drain(a), drain(b), drain(a), drain(b)]);
      const ids = receiver.received.map((r) => r.id).sort();
      assert.equal(ids.length, n);
      assert.equal(new Set(ids).size, n);
      assert.ok(receiver.received.every((r) => r.verifyError === null));
      const byInstance = await store.db.selectFrom('delivery_attempts').select(['instance']).execute();
      assert.equal(byInstance.length, n);
      assert.equal(a.counters.delivered + b.counters.delivered, n);
      assert.ok(a.counters.delivered > 0 && b.counters.delivered > 0, JSON.stringify([a.counters, b.counters]));
    } finally {
      await receiver.close();
      await other.close();
      await store.remove();
    }
  });

  test(
    `${kind}: a claim whose instance died is taken over after its lease`,
    { timeout: TEST_DEADLINE_MS },
    async (t) => {
      const store = await openDatabase(t, kind);
      if (store === null) return;
      try {
        const clock = new TestClock();
        await enqueue(
          store.db,
          { id: 'msg_x', channel: 'email', kind: 'alert', recipient: 'a@b.example', payload: '{}' },
          clock.ms,
        );
        const first = await claimDue(store.db, store.dialect, clock.ms, 10, 60_000);
        assert.deepEqual(
          first.deliveries.map((d) => d.id),
          ['msg_x'],
        );
        // The claimer dies: nobody else may take it while its lease runs.
        clock.advance(59_000);
        assert.equal((await claimDue(store.db, store.dialect, clock.ms, 10, 60_000)).deliveries.length, 0);
        clock.advance(2_000);
        const second = await claimDue(store.db, store.dialect, clock.ms, 10, 60_000);
        assert.deepEqual(
          second.deliveries.map((d) => d.id),
          ['msg_x'],
        );
        assert.notEqual(second.token, first.token);
      } finally {
        await store.remove();
      }
    },
  );
}
