import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import mqtt from 'mqtt';
import { startAedesBroker } from '../../../rigs/broker/index.js';
import { silentLogger } from '../../../src/core/log.js';
import { parseConnectionOptions } from '../../../src/fleet/operator/connection.js';
import { eventFilter, startIngest } from '../../../src/console/ingest/ingest.js';
import { openTestStore } from '../support/store.js';
import { waitFor } from '../support/wait.js';

const AT = '2026-11-28T09:00:00.000Z';

function sale(machineId: string, eventId: string, amount = '1.50') {
  return {
    kind: 'sale',
    eventId,
    at: AT,
    machineId,
    txId: `tx-${eventId}`,
    flow: 'static',
    amount,
    currency: 'EUR',
    products: [{ item: 1, price: amount, outcome: 'success' }],
    closing: 'settlement',
    verdict: 'accepted',
  };
}

const STATUS = {
  online: true,
  machineId: 'vm-1',
  terminalId: 'T1',
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
};

async function device(url: string) {
  const client = await mqtt.connectAsync(url, { protocolVersion: 4, clientId: `dev-${Math.random()}` });
  return {
    send: (topic: string, body: unknown, retain = false) =>
      client.publishAsync(topic, typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body), {
        qos: 1,
        retain,
      }),
    close: () => client.endAsync(),
  };
}

test('the event filter is a shared subscription unless the broker has none', () => {
  assert.equal(
    eventFilter({ group: 'console', subscription: 'shared' }, 'acme/vend'),
    '$share/console/acme/vend/+/events',
  );
  assert.equal(eventFilter({ group: 'console', subscription: 'plain' }, 'qrvend'), 'qrvend/+/events');
});

test(
  'events are stored once, hostile messages counted and refused, the topic machine wins',
  { timeout: 60_000 },
  async () => {
    const broker = await startAedesBroker();
    const store = await openTestStore('sqlite');
    const connection = parseConnectionOptions({ url: broker.url, protocol: '4' });
    const ingest = await startIngest(
      store.db,
      { connection, group: 'g', subscription: 'plain', session: 's1', reconnectMs: 200 },
      silentLogger(),
    );
    const dev = await device(broker.url);
    try {
      await dev.send('qrvend/vm-1/status', STATUS, true);
      await dev.send('qrvend/vm-1/events', sale('vm-1', 'e1'));
      await dev.send('qrvend/vm-1/events', sale('vm-1', 'e1'));
      await dev.send('qrvend/vm-1/events', sale('vm-2', 'e2'));
      await dev.send('qrvend/vm-1/status', { ...STATUS, machineId: 'vm-2' }, true);
      await dev.send('qrvend/vm-1/events', 'not json {');
      await dev.send('qrvend/vm-1/events', sale('vm-1', 'e3', '1.2345'));
      await dev.send('qrvend/vm-1/events', Buffer.alloc(70 * 1024, 0x20));
      await dev.send('qrvend/vm-1/events', sale('vm-1', 'e4', '2.00'));
      await waitFor('the last event', () => ingest.counters.stored === 2 && ingest.counters.duplicates === 1);
      assert.deepEqual(ingest.counters.refused, { 'machine-mismatch': 2, 'not-json': 1, schema: 1, 'too-large': 1 });
      const sales = await store.db.selectFrom('sales').select(['event_id', 'amount']).orderBy('event_id').execute();
      assert.deepEqual(sales, [
        { event_id: 'e1', amount: '1.50' },
        { event_id: 'e4', amount: '2.00' },
      ]);
      const machines = await store.db.selectFrom('machines').select('machine_id').execute();
      assert.deepEqual(
        machines.map((m) => m.machine_id),
        ['vm-1'],
      );
    } finally {
      await dev.close();
      await ingest.close();
      await store.remove();
      await broker.close();
    }
  },
);

test(
  'an event whose commit failed is not acknowledged: the broker delivers it again',
  { timeout: 60_000 },
  async () => {
    const broker = await startAedesBroker();
    const store = await openTestStore('sqlite');
    // A gate in the database: while it holds a row, every insert into events fails, as on a failing disk:
    // an error that is not the data's (SQLite's malformed-JSON error, PostgreSQL's raise_exception),
    // so nothing is refused and nothing acknowledged.
    await sql`create table fail_gate (x integer)`.execute(store.db);
    await sql`insert into fail_gate values (1)`.execute(store.db);
    await sql`create trigger fail_events before insert on events when exists (select 1 from fail_gate)
    begin select json('gate closed'); end`.execute(store.db);
    const connection = parseConnectionOptions({ url: broker.url, protocol: '4' });
    const ingest = await startIngest(
      store.db,
      { connection, group: 'g', subscription: 'plain', session: 's2', reconnectMs: 100 },
      silentLogger(),
    );
    const dev = await device(broker.url);
    try {
      await dev.send('qrvend/vm-1/events', sale('vm-1', 'e1'));
      await waitFor('a failed commit', () => ingest.counters.failedMessages >= 1);
      await sql`delete from fail_gate`.execute(store.db);
      await waitFor('the event stored after its redelivery', () => ingest.counters.stored === 1);
      const rows = await store.db.selectFrom('events').select('event_id').execute();
      assert.deepEqual(rows, [{ event_id: 'e1' }]);
    } finally {
      await dev.close();
      await ingest.close();
      await store.remove();
      await broker.close();
    }
  },
);
