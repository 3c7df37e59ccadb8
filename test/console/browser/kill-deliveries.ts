/**
 * Two `qrvend console` processes on one PostgreSQL database sharing the delivery queue, one
 * killed with SIGKILL in the middle of deliveries and started again: every notification and every
 * feed event reaches the receiver (verified with standardwebhooks), none lost, the feed in order;
 * a delivery whose attempt was cut off comes again with the same webhook-id, and no delivery is
 * attempted by two instances at once. Run by `npm run console-test` with its PostgreSQL server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMosquitto } from '../../../rigs/broker/mosquitto-broker.js';
import { atProcessEnd } from '../../../src/sim/process-end.js';
import { enqueue } from '../../../src/console/store/delivery-queue.js';
import { storeEventBatch } from '../../../src/console/store/event-batch.js';
import { addEndpoint } from '../../../src/console/store/webhook-queries.js';
import { newWebhookSecret } from '../../../src/console/deliveries/signing.js';
import { saleEvent } from '../deliveries/support.js';
import { openTestStore } from '../support/store.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { waitFor } from '../support/wait.js';

const MAIN_JS = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

function startInstance(dir: string, brokerUrl: string, db: string, instance: string): ChildProcess {
  const config = join(dir, `${instance}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      broker: { url: brokerUrl, protocol: '5' },
      db,
      listen: '127.0.0.1:0',
      instance,
      reconnectMs: 200,
      webhooks: { timeoutS: 2 },
      deliveries: { pollMs: 100, concurrency: 2 },
    }),
  );
  const child = spawn(process.execPath, [MAIN_JS, 'console', '-c', config], { stdio: ['ignore', 'ignore', 'inherit'] });
  const forget = atProcessEnd(() => child.kill('SIGKILL'));
  child.once('exit', forget);
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await gone;
}

test(
  'two instances share the delivery queue; one killed mid-delivery: nothing lost, retries keep their id',
  { timeout: 400_000 },
  async (t) => {
    if ((process.env.QRVEND_CONSOLE_TEST_PG ?? '') === '') {
      t.skip('needs QRVEND_CONSOLE_TEST_PG (npm run console-test starts a PostgreSQL server)');
      return;
    }
    const broker = await startMosquitto({});
    const store = await openTestStore();
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-console-deliveries-'));
    const secret = newWebhookSecret();
    const receiver = await startReceiver(secret);
    // Each answer takes a while, so the kill finds attempts in flight.
    receiver.answer = () => ({ status: 200, delayMs: 150 });
    const consoles: ChildProcess[] = [];
    try {
      const endpoint = await addEndpoint(
        store.db,
        { owner: 'ops', url: receiver.url, secret, events: true, alerts: true, from: 'beginning' },
        '',
      );
      const alerts = 60;
      for (let i = 0; i < alerts; i++) {
        const payload = JSON.stringify({ type: 'alert.raised', timestamp: new Date().toISOString(), data: { i } });
        await enqueue(
          store.db,
          { id: `msg_alert_${i}`, channel: 'webhook', kind: 'alert', endpoint_id: endpoint, payload },
          Date.now(),
        );
      }
      const events = 400;
      for (let i = 0; i < events; i += 20) {
        await storeEventBatch(
          store.db,
          Array.from({ length: 20 }, (_, j) => saleEvent(`e${i + j}`, `vm-${(i + j) % 7}`)),
        );
      }
      consoles.push(
        startInstance(dir, broker.url, store.target, 'reach-a'),
        startInstance(dir, broker.url, store.target, 'reach-b'),
      );
      await waitFor(
        'a third of the alerts delivered',
        () => receiver.received.filter((r) => r.id.startsWith('msg_alert')).length >= alerts / 3 || undefined,
        120_000,
      );
      await kill(consoles[0]!);
      consoles[0] = startInstance(dir, broker.url, store.target, 'reach-a');
      await waitFor(
        'every delivery done',
        async () => {
          const pending = await store.db
            .selectFrom('deliveries')
            .select('id')
            .where('state', '!=', 'delivered')
            .execute();
          return pending.length === 0 || undefined;
        },
        240_000,
      );
      assert.ok(receiver.received.every((r) => r.verifyError === null));
      const alertIds = new Set(receiver.received.filter((r) => r.json.type.startsWith('alert')).map((r) => r.id));
      assert.equal(alertIds.size, alerts, 'every notification arrived');
      const positions = receiver.received
        .filter((r) => r.json.type === 'events')
        .flatMap((r) => (r.json.data.events as { position: number }[]).map((e) => e.position));
      const unique = [...new Set(positions)];
      assert.deepEqual(
        unique,
        Array.from({ length: events }, (_, i) => i + 1),
        'the feed whole and in order',
      );
      // Anything received twice came with its own webhook-id again (a retry), never a new one.
      const byBody = new Map<string, Set<string>>();
      for (const r of receiver.received) byBody.set(r.body, (byBody.get(r.body) ?? new Set()).add(r.id));
      assert.ok([...byBody.values()].every((ids) => ids.size === 1));
      assert.equal(receiver.overlaps, 0, 'no delivery attempted by two instances at once');
      const instances = await store.db.selectFrom('delivery_attempts').select('instance').distinct().execute();
      assert.deepEqual(instances.map((i) => i.instance).sort(), ['reach-a', 'reach-b']);
      t.diagnostic(`received ${receiver.received.length} requests for ${alerts + Math.ceil(events / 100)}+ deliveries`);
    } finally {
      for (const c of consoles) await kill(c).catch(() => undefined);
      await receiver.close();
      await store.remove();
      await broker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
