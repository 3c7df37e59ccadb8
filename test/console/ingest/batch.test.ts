import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import mqtt from 'mqtt';
import type { IPublishPacket, Packet } from 'mqtt-packet';
import { startAedesBroker } from '../../../rigs/broker/index.js';
import { silentLogger } from '../../../src/core/log.js';
import { parseConnectionOptions } from '../../../src/fleet/operator/connection.js';
import { startIngest, type Ingest } from '../../../src/console/ingest/ingest.js';
import type { TestStore } from '../support/store.js';
import { waitFor } from '../support/wait.js';
import { DATABASES, openDatabase, refuseEventId, stopDatabases } from '../store/databases.js';
import { CHILD_DEADLINE_MS } from '../../support/deadlines.js';

after(stopDatabases);

const AT = '2026-11-28T09:00:00.000Z';

function sale(machineId: string, eventId: string) {
  return {
    kind: 'sale',
    eventId,
    at: AT,
    machineId,
    txId: `tx-${eventId}`,
    flow: 'static',
    amount: '1.50',
    currency: 'EUR',
    products: [{ item: 1, price: '1.50', outcome: 'success' }],
    closing: 'settlement',
    verdict: 'accepted',
  };
}

/** A broker, a console's ingest on the store, and a machine publishing at QoS 1; all torn down by close(). */
async function rig(store: TestStore, session: string, batch = { events: 20, ms: 1000 }) {
  const broker = await startAedesBroker();
  const connection = parseConnectionOptions({ url: broker.url, protocol: '4' });
  const ingest = await startIngest(
    store.db,
    { connection, group: 'g', subscription: 'plain', session, reconnectMs: 100, batch },
    silentLogger(),
  );
  const device = await mqtt.connectAsync(broker.url, { protocolVersion: 4, clientId: `dev-${session}` });
  /** Sends the events at once (none waits for another's PUBACK), so they arrive together. */
  const send = (events: ReturnType<typeof sale>[]) =>
    Promise.all(events.map((e) => device.publishAsync(`qrvend/${e.machineId}/events`, JSON.stringify(e), { qos: 1 })));
  return {
    ingest,
    send,
    close: async () => {
      await device.endAsync();
      await ingest.close();
      await broker.close();
    },
  };
}

/** Every PUBACK the ingest sends, and whether its event was committed then (read on another connection). */
function watchAcks(ingest: Ingest, file: string) {
  const reader = new Database(file, { readonly: true });
  const committed = reader.prepare('select count(*) as n from events where event_id = ?');
  const eventOf = new Map<number, string>();
  const acks: { eventId: string; committed: boolean }[] = [];
  ingest.client.on('packetreceive', (packet: Packet) => {
    if (packet.cmd !== 'publish') return;
    const p = packet as IPublishPacket;
    if (p.messageId !== undefined) eventOf.set(p.messageId, (JSON.parse(p.payload.toString()) as sale).eventId);
  });
  ingest.client.on('packetsend', (packet: Packet) => {
    if (packet.cmd !== 'puback' || packet.messageId === undefined) return;
    const eventId = eventOf.get(packet.messageId) ?? '?';
    acks.push({ eventId, committed: (committed.get(eventId) as { n: number }).n === 1 });
  });
  return { acks, close: () => reader.close() };
}
type sale = ReturnType<typeof sale>;

test(
  'events that arrive together commit in one transaction; each PUBACK goes after its commit',
  {
    timeout: CHILD_DEADLINE_MS,
  },
  async (t) => {
    const store = await openDatabase(t, 'sqlite');
    if (store === null) return;
    const r = await rig(store, 'ack-after-commit');
    const watch = watchAcks(r.ingest, store.target);
    try {
      const events = Array.from({ length: 40 }, (_, i) => sale(`vm-${i % 4}`, `e${i}`));
      await r.send(events);
      await waitFor('every event stored', () => r.ingest.counters.stored === 40);
      await waitFor('every PUBACK sent', () => watch.acks.length === 40);
      assert.deepEqual(
        watch.acks.filter((a) => !a.committed),
        [],
        'a PUBACK went before its event was committed',
      );
      assert.ok(r.ingest.counters.batches < 40, `${r.ingest.counters.batches} transactions for 40 events`);
      assert.equal(r.ingest.counters.failedMessages, 0);
    } finally {
      watch.close();
      await r.close();
      await store.remove();
    }
  },
);

for (const kind of DATABASES) {
  test(
    `${kind}: one event the database refuses does not lose the others of its batch`,
    {
      timeout: CHILD_DEADLINE_MS,
    },
    async (t) => {
      const store = await openDatabase(t, kind);
      if (store === null) return;
      await refuseEventId(store, 'poison');
      const r = await rig(store, `poison-${kind}`, { events: 10, ms: 1000 });
      try {
        const events = Array.from({ length: 10 }, (_, i) => sale('vm-1', i === 4 ? 'poison' : `e${i}`));
        await r.send(events);
        await waitFor('the others stored', () => r.ingest.counters.stored === 9);
        await waitFor('the refused event counted', () => r.ingest.counters.refused['store-refused'] === 1);
        const refusal = await store.db.selectFrom('refusals').selectAll().executeTakeFirstOrThrow();
        assert.equal(refusal.reason, 'store-refused');
        assert.match(refusal.last_detail, /event poison: .*refused by the test/);
        const rows = await store.db.selectFrom('events').select('event_id').orderBy('event_id').execute();
        assert.deepEqual(
          rows.map((row) => row.event_id),
          ['e0', 'e1', 'e2', 'e3', 'e5', 'e6', 'e7', 'e8', 'e9'],
        );
        // Refused and acknowledged: the broker does not send it again, the connection was never dropped.
        assert.equal(r.ingest.counters.failedMessages, 0);
      } finally {
        await r.close();
        await store.remove();
      }
    },
  );

  test(
    `${kind}: a batch whose commit fails is not acknowledged; sent again, each event is stored once`,
    {
      timeout: CHILD_DEADLINE_MS,
    },
    async (t) => {
      const store = await openDatabase(t, kind);
      if (store === null) return;
      // A gate in the database: while it holds a row, every insert into events fails, as on a failing disk:
      // an error that is not the data's (SQLite's malformed-JSON error, PostgreSQL's raise_exception),
      // so nothing is refused and nothing acknowledged.
      await sql`create table fail_gate (x integer)`.execute(store.db);
      await sql`insert into fail_gate values (1)`.execute(store.db);
      if (store.dialect === 'sqlite') {
        await sql`create trigger fail_events before insert on events when exists (select 1 from fail_gate)
        begin select json('gate closed'); end`.execute(store.db);
      } else {
        await sql`create function fail_events() returns trigger language plpgsql as $$
        begin if exists (select 1 from fail_gate) then raise exception 'gate closed'; end if; return new; end \
$$`.execute(store.db);
        await sql`create trigger fail_events before insert on events for each row execute function \
fail_events()`.execute(store.db);
      }
      const r = await rig(store, `gate-${kind}`, { events: 10, ms: 1000 });
      try {
        // Twice the same event among them: a redelivery the machine made itself.
        const events = Array.from({ length: 10 }, (_, i) => sale('vm-1', `e${i === 9 ? 0 : i}`));
        await r.send(events);
        await waitFor('a failed commit', () => r.ingest.counters.failedMessages >= 10);
        assert.equal(r.ingest.counters.stored, 0);
        await sql`delete from fail_gate`.execute(store.db);
        await waitFor('the events stored after their redelivery', () => r.ingest.counters.stored === 9);
        const rows = await store.db.selectFrom('events').select('event_id').execute();
        assert.equal(rows.length, 9);
        const totals = await store.db
          .selectFrom('daily_totals')
          .select(sql<number>`sum(paid_count)`.as('n'))
          .executeTakeFirstOrThrow();
        assert.equal(Number(totals.n), 9);
      } finally {
        await r.close();
        await store.remove();
      }
    },
  );
}
