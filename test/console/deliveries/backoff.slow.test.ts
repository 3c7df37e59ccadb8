/**
 * The whole retry schedule with an injected clock (no real waiting): a receiver down for more
 * than a day gets the same webhook-id at 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h later,
 * each signed at its own time; after the last the delivery is given up, the endpoint disabled and
 * its owner told by e-mail; enabled again, the feed resumes with the same webhook-id.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { storeEventBatch } from '../../../src/console/store/event-batch.js';
import { putUser } from '../../../src/console/store/accounts.js';
import { setEmail } from '../../../src/console/store/alert-queries.js';
import { addEndpoint, enableEndpoint, findEndpoint } from '../../../src/console/store/webhook-queries.js';
import { RETRY_DELAYS_MS } from '../../../src/console/deliveries/backoff.js';
import { newWebhookSecret } from '../../../src/console/deliveries/signing.js';
import { openDatabase, stopDatabases } from '../store/databases.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { TestClock, saleEvent, testWorker } from './support.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

after(stopDatabases);

test(
  'a receiver down for 27.6 hours: eight attempts, one webhook-id, then disabled and its owner told',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const store = (await openDatabase(t, 'sqlite'))!;
    const clock = new TestClock(Date.parse('2026-12-01T09:00:00.000Z'));
    const secret = newWebhookSecret();
    const receiver = await startReceiver(secret, clock.now);
    receiver.answer = () => ({ status: 503 });
    try {
      await putUser(store.db, 'ana', 'admin', 'a-long-password');
      await setEmail(store.db, 'ana', 'ana@ops.example');
      const id = await addEndpoint(
        store.db,
        { owner: 'ana', url: receiver.url, secret, events: true, alerts: false, from: 'now' },
        '',
      );
      await storeEventBatch(store.db, [saleEvent('s1'), saleEvent('s2')]);
      const worker = testWorker(store, clock);
      const start = clock.ms;
      const times: number[] = [];
      assert.equal(await worker.runOnce(), 1);
      times.push(clock.ms - start);
      for (const delay of RETRY_DELAYS_MS) {
        clock.advance(delay - 1);
        assert.equal(await worker.runOnce(), 0, 'not before its time');
        clock.advance(1);
        assert.equal(await worker.runOnce(), 1);
        times.push(clock.ms - start);
      }
      assert.deepEqual(times, [0, 5_000, 305_000, 2_105_000, 9_305_000, 27_305_000, 63_305_000, 99_305_000]);
      assert.ok(times[times.length - 1]! >= 24 * 3_600_000);
      assert.equal(receiver.received.length, 8);
      assert.equal(new Set(receiver.received.map((r) => r.id)).size, 1, 'the same webhook-id on every attempt');
      assert.equal(new Set(receiver.received.map((r) => r.body)).size, 1, 'the same body');
      assert.deepEqual(
        receiver.received.map((r) => r.verifyError),
        Array(8).fill(null),
      );
      assert.deepEqual(
        receiver.received.map((r) => r.timestamp * 1000 - start),
        times,
        'each signed at its own attempt',
      );
      const endpoint = (await findEndpoint(store.db, id))!;
      assert.equal(endpoint.enabled, 0);
      assert.match(endpoint.disabled_reason ?? '', /disabled after 8 failed attempts over 27\.6 h; last: answered 503/);
      const notice = await store.db
        .selectFrom('deliveries')
        .selectAll()
        .where('kind', '=', 'notice')
        .executeTakeFirstOrThrow();
      assert.equal(notice.recipient, 'ana@ops.example');
      assert.match(JSON.parse(notice.payload).subject, new RegExp(`webhook endpoint ${id} disabled`));
      clock.advance(3_600_000);
      assert.equal(
        await worker.runOnce(),
        1,
        'only the notice (e-mail, not configured here): nothing to the disabled endpoint',
      );
      assert.equal(receiver.received.length, 8);
      receiver.answer = () => ({ status: 200 });
      await enableEndpoint(store.db, id, clock.ms);
      assert.equal(await worker.runOnce(), 1);
      assert.equal(receiver.received.length, 9);
      assert.equal(receiver.received[8]!.id, receiver.received[0]!.id, 'the feed resumes with the same webhook-id');
      assert.equal((await findEndpoint(store.db, id))!.feed_cursor, 2);
    } finally {
      await receiver.close();
      await store.remove();
    }
  },
);
