/**
 * Messages the console's database cannot store, through Debian's mosquitto (docs/console.md, "How
 * an event is kept"): an event whose eventId holds U+0000 (PostgreSQL's text cannot hold it), a
 * retained status whose terminalId holds U+0000, and a health message likewise, each followed by
 * good sales. Each bad one is refused, counted and acknowledged; the good ones behind it are
 * stored without the console ever dropping its broker connection (a dropped connection is what
 * stalled ingest: the broker sent the same message again at every reconnect, with the back-off
 * growing to 30 s); the log says what was refused and why, never that the database is down. A
 * second instance joining later gets the retained status too, and goes on alike. Run by
 * `npm run console-test` (run.ts) on SQLite and on PostgreSQL.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import mqtt, { type MqttClient } from 'mqtt';
import { startMosquitto } from '../../../rigs/broker/mosquitto-broker.js';
import { createLogger } from '../../../src/core/log.js';
import { parseConsoleConfig } from '../../../src/console/config.js';
import { startConsole, type RunningConsole } from '../../../src/console/run.js';
import { openTestStore, type TestStore } from '../support/store.js';
import { waitFor } from '../support/wait.js';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../../support/deadlines.js';

const GOOD = 1000;
const AT = '2026-11-28T09:00:00.000Z';
const M = 'vm-nul';

const sale = (eventId: string) => ({
  kind: 'sale',
  eventId,
  at: AT,
  machineId: M,
  txId: `tx-${eventId.length}`,
  flow: 'static',
  amount: '1.50',
  currency: 'EUR',
  products: [{ item: 1, price: '1.50', outcome: 'success' }],
  closing: 'settlement',
  verdict: 'accepted',
});

const status = (terminalId: string) => ({
  online: true,
  machineId: M,
  terminalId,
  uniQr: null,
  version: '1.0.0',
  startedAt: AT,
  reader: 'enabled',
  readerDisabledRemotely: false,
  gateway: 'online',
  outbox: { pending: 0, dead: 0 },
  alarms: [],
  acceptsRelayedStart: false,
  at: AT,
});

interface Instance {
  running: RunningConsole;
  lines: string[];
  drops: number;
}

/** One console instance, in this process so its counters and its broker connection can be watched. */
async function startInstance(brokerUrl: string, store: TestStore, instance: string): Promise<Instance> {
  const lines: string[] = [];
  const destination = new PassThrough();
  destination.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  const settings = parseConsoleConfig({
    broker: { url: brokerUrl, protocol: '5' },
    db: store.target,
    listen: '127.0.0.1:0',
    instance,
    // mosquitto's in-flight window is 20: a batch never holds more (docs/console.md).
    ingest: { batchEvents: 20, batchMs: 10 },
  });
  const running = await startConsole(settings, createLogger({ level: 'info', destination }));
  const watched: Instance = { running, lines, drops: 0 };
  running.ingest.client.on('close', () => watched.drops++);
  return watched;
}

async function storedEvents(store: TestStore): Promise<number> {
  const row = await store.db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Publishes `count` good sales at once (QoS 1), then waits until the database holds `total` events. */
async function sellAndWait(device: MqttClient, store: TestStore, from: number, count: number, total: number) {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      device.publishAsync(`qrvend/${M}/events`, JSON.stringify(sale(`good-${from + i}`)), { qos: 1 }),
    ),
  );
  await waitFor(`${total} events stored`, async () => (await storedEvents(store)) >= total, 120_000);
  return (count * 1000) / (performance.now() - started);
}

function assertRefusalLogged(lines: string[], kind: string, field: string): void {
  const line = lines.find((l) => l.includes('"console.message.refused"') && l.includes(`"detail":"${kind} ${field}`));
  assert.ok(line !== undefined, `no log line says the ${kind} was refused for its ${field}`);
  assert.match(line, /holds U\+0000, which the console's database cannot store/);
}

test(
  'messages the database cannot store are refused and acknowledged; the good ones behind them go on',
  {
    timeout: TEST_DEADLINE_MS,
  },
  async (t) => {
    const broker = await startMosquitto({});
    const store = await openTestStore();
    let a: Instance | null = null;
    let b: Instance | null = null;
    const device = await mqtt.connectAsync(broker.url, { protocolVersion: 5, clientId: 'unstorable-device' });
    try {
      a = await startInstance(broker.url, store, 'unstorable-a');
      // The rate of good sales alone, to compare (a diagnostic: speed is measured by the bench).
      const alone = await sellAndWait(device, store, 0, GOOD, GOOD);

      await device.publishAsync(`qrvend/${M}/events`, JSON.stringify(sale('a\u0000b')), { qos: 1 });
      await device.publishAsync(`qrvend/${M}/status`, JSON.stringify(status('T\u0000')), { qos: 1, retain: true });
      await device.publishAsync(
        `qrvend/${M}/health`,
        JSON.stringify({ machineId: M, at: AT, stats: { note: 'x\u0000' } }),
        { qos: 1 },
      );
      const behind = await sellAndWait(device, store, GOOD, GOOD, 2 * GOOD);
      t.diagnostic(`good sales stored: ${alone.toFixed(0)}/s alone, ${behind.toFixed(0)}/s behind the bad messages`);

      await waitFor('the three refused', () => a!.running.ingest.counters.refused.schema === 3, CHILD_DEADLINE_MS);
      assert.equal(a.drops, 0, 'the console dropped its broker connection: the bad message came again and again');
      assert.equal(a.running.ingest.counters.failedMessages, 0);
      assert.equal(a.running.ingest.counters.stored, 2 * GOOD);
      assertRefusalLogged(a.lines, 'event', 'eventId');
      assertRefusalLogged(a.lines, 'status', 'terminalId');
      assertRefusalLogged(a.lines, 'health', 'stats.note');
      assert.ok(
        !a.lines.some((l) => /CONSOLE_STORE_FAILED|database unreachable/.test(l)),
        'logged as the database down',
      );
      const refusal = await store.db.selectFrom('refusals').selectAll().where('machine_id', '=', M).executeTakeFirst();
      assert.equal(Number(refusal?.count), 3);

      // A second instance joins: the retained status reaches it too; it refuses it and goes on.
      b = await startInstance(broker.url, store, 'unstorable-b');
      await waitFor(
        'the retained status refused by the new instance',
        () => b!.running.ingest.counters.refused.schema === 1,
      );
      await sellAndWait(device, store, 2 * GOOD, 200, 2 * GOOD + 200);
      assert.equal(a.drops + b.drops, 0, 'an instance dropped its broker connection');
      assert.ok(!b.lines.some((l) => /CONSOLE_STORE_FAILED|database unreachable/.test(l)));
      assertRefusalLogged(b.lines, 'status', 'terminalId');
    } finally {
      await device.endAsync();
      await b?.running.close();
      await a?.running.close();
      await store.remove();
      await broker.close();
    }
  },
);
