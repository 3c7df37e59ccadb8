/**
 * The alert evaluator with an injected clock: "no sale for 2 hours" inside Monday-Friday 08:00-18:00
 * Europe/Berlin, across the weekend the clocks go forward, told to a webhook endpoint (verified
 * with standardwebhooks) at 09:30 CEST on Monday, not an hour early or late; the evaluation lease
 * lets one instance evaluate at a time.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../../src/core/log.js';
import { AlertEvaluator } from '../../../src/console/alerts/evaluator.js';
import { addRule, takeLease } from '../../../src/console/store/alert-queries.js';
import { addEndpoint } from '../../../src/console/store/webhook-queries.js';
import { newWebhookSecret } from '../../../src/console/deliveries/signing.js';
import { openDatabase, stopDatabases } from '../store/databases.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { TestClock, testWorker } from '../deliveries/support.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

after(stopDatabases);

test('no sale for 2 business hours, across the change to summer time', { timeout: TEST_DEADLINE_MS }, async (t) => {
  const store = (await openDatabase(t, 'sqlite'))!;
  const clock = new TestClock(Date.parse('2026-03-27T16:45:00Z'));
  const secret = newWebhookSecret();
  const receiver = await startReceiver(secret, clock.now);
  try {
    await store.db
      .insertInto('machines')
      .values({
        machine_id: 'M-9',
        online: 1,
        alarms: '',
        seen_at: '2026-03-27T16:30:00.000Z',
        outbox_pending: 0,
        outbox_dead: 0,
        disabled_remotely: 0,
        last_sale_at: '2026-03-27T16:30:00.000Z',
        online_since: '2026-03-27T06:00:00.000Z',
      })
      .execute();
    const endpoint = await addEndpoint(
      store.db,
      { owner: 'ana', url: receiver.url, secret, events: false, alerts: true, from: 'now' },
      '',
    );
    await addRule(
      store.db,
      'ana',
      {
        name: 'quiet machine',
        condition: 'no-sale',
        alarm_code: '',
        threshold_minutes: 120,
        machines: 'M-9',
        route_id: '',
        days: '1,2,3,4,5',
        from_minute: 8 * 60,
        to_minute: 18 * 60,
        time_zone: 'Europe/Berlin',
        hold_minutes: 0,
        repeat_minutes: 0,
        notify_cleared: 0,
        email: 0,
        endpoint_id: endpoint,
        enabled: 1,
      },
      '',
    );
    const evaluator = new AlertEvaluator({
      db: store.db,
      instance: 'a',
      log: silentLogger(),
      clock: clock.now,
      everyMs: 30_000,
      publicUrl: 'https://console.ops.example',
    });
    const at = async (iso: string) => {
      clock.ms = Date.parse(iso);
      return evaluator.runOnce();
    };
    assert.equal(await at('2026-03-27T16:45:00Z'), 0, 'Friday 17:45 CET: 15 minutes');
    assert.equal(await at('2026-03-28T11:00:00Z'), 0, 'Saturday: not in the hours');
    assert.equal(await at('2026-03-29T11:00:00Z'), 0, 'Sunday, the day of the change');
    assert.equal(await at('2026-03-30T06:30:00Z'), 0, 'Monday 08:30 CEST: an hour');
    assert.equal(await at('2026-03-30T07:29:00Z'), 0, 'Monday 09:29 CEST: 119 minutes');
    assert.equal(await at('2026-03-30T07:30:00Z'), 1, 'Monday 09:30 CEST: two hours');
    assert.equal(await at('2026-03-30T07:31:00Z'), 0, 'told once');
    assert.equal(await testWorker(store, clock).runOnce(), 1);
    const [hook] = receiver.received;
    assert.equal(hook?.verifyError, null);
    assert.equal(hook?.json.type, 'alert.raised');
    assert.equal(hook?.json.data.machineId, 'M-9');
    assert.equal(hook?.json.data.since, '2026-03-27T16:30:00.000Z');
    assert.equal(hook?.json.data.url, 'https://console.ops.example/machines/M-9');
  } finally {
    await receiver.close();
    await store.remove();
  }
});

test('one instance evaluates at a time: the lease', { timeout: TEST_DEADLINE_MS }, async (t) => {
  const store = (await openDatabase(t, 'sqlite'))!;
  try {
    assert.equal(await takeLease(store.db, 'alerts', 'a', 1000, 90_000), true);
    assert.equal(await takeLease(store.db, 'alerts', 'b', 2000, 90_000), false);
    assert.equal(await takeLease(store.db, 'alerts', 'a', 30_000, 90_000), true);
    assert.equal(await takeLease(store.db, 'alerts', 'b', 119_999, 90_000), false);
    assert.equal(await takeLease(store.db, 'alerts', 'b', 120_001, 90_000), true);
  } finally {
    await store.remove();
  }
});
