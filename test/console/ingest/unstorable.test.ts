import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { sql } from 'kysely';
import mqtt from 'mqtt';
import type { Packet } from 'mqtt-packet';
import { startAedesBroker } from '../../../rigs/broker/index.js';
import { createLogger } from '../../../src/core/log.js';
import { parseConnectionOptions } from '../../../src/fleet/operator/connection.js';
import { startIngest } from '../../../src/console/ingest/ingest.js';
import type { TestStore } from '../support/store.js';
import { waitFor } from '../support/wait.js';
import { DATABASES, openDatabase, refuseEventId, stopDatabases } from '../store/databases.js';
import { CHILD_DEADLINE_MS } from '../../support/deadlines.js';

after(stopDatabases);

const AT = '2026-11-28T09:00:00.000Z';

const sale = (machineId: string, eventId: string) => ({
  kind: 'sale',
  eventId,
  at: AT,
  machineId,
  txId: `tx-${eventId.length}`,
  flow: 'static',
  amount: '1.50',
  currency: 'EUR',
  products: [{ item: 1, price: '1.50', outcome: 'success' }],
  closing: 'settlement',
  verdict: 'accepted',
});

const status = (machineId: string, terminalId: string) => ({
  online: true,
  machineId,
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

const health = (machineId: string, note: string) => ({ machineId, at: AT, stats: { note } });

/**
 * A broker, the console's ingest on the store and a machine. Counts what shows a redelivery loop:
 * the ingest's broker connection closing (it drops it after a commit it could not finish) and
 * the PUBACKs it sent. The log is kept to read.
 */
async function rig(store: TestStore, session: string) {
  const broker = await startAedesBroker();
  const lines: string[] = [];
  const destination = new PassThrough();
  destination.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  const connection = parseConnectionOptions({ url: broker.url, protocol: '4' });
  const ingest = await startIngest(
    store.db,
    { connection, group: 'g', subscription: 'plain', session, reconnectMs: 100, batch: { events: 20, ms: 50 } },
    createLogger({ level: 'warn', destination }),
  );
  const seen = { drops: 0, pubacks: 0 };
  ingest.client.on('close', () => seen.drops++);
  ingest.client.on('packetsend', (p: Packet) => void (p.cmd === 'puback' && seen.pubacks++));
  const device = await mqtt.connectAsync(broker.url, { protocolVersion: 4, clientId: `dev-${session}` });
  const send = (topic: string, body: unknown, retain = false) =>
    device.publishAsync(`qrvend/${topic}`, JSON.stringify(body), { qos: 1, retain });
  const good = async () => {
    for (let i = 1; i <= 5; i++) await send('vm-1/events', sale('vm-1', `good-${i}`));
  };
  return {
    ingest,
    seen,
    lines,
    send,
    good,
    close: async () => {
      await device.endAsync();
      await ingest.close();
      await broker.close();
    },
  };
}

async function goodStored(store: TestStore): Promise<string[]> {
  const rows = await store.db.selectFrom('sales').select('event_id').orderBy('event_id').execute();
  return rows.map((r) => r.event_id);
}

for (const kind of DATABASES) {
  test(
    `${kind}: text the database cannot hold is refused at the check and acknowledged; the good events go on`,
    { timeout: CHILD_DEADLINE_MS },
    async (t) => {
      const store = await openDatabase(t, kind);
      if (store === null) return;
      const r = await rig(store, `text-${kind}`);
      try {
        await r.send('vm-1/events', sale('vm-1', 'a\u0000b'));
        await r.send('vm-1/events', sale('vm-1', 'lone-\ud800'));
        await r.send('vm-1/status', status('vm-1', 'T\u0000'), true);
        await r.send('vm-1/health', health('vm-1', 'x\u0000'));
        await r.good();
        await waitFor('the good events stored', () => r.ingest.counters.stored === 5);
        await waitFor('the bad ones refused', () => r.ingest.counters.refused.schema === 4);
        // Every QoS 1 message acknowledged (7 events, 1 status; health is subscribed at QoS 0).
        await waitFor('every PUBACK', () => r.seen.pubacks === 8);
        assert.equal(r.seen.drops, 0, 'the ingest dropped its broker connection: a redelivery loop');
        assert.equal(r.ingest.counters.failedMessages, 0);
        assert.deepEqual(await goodStored(store), ['good-1', 'good-2', 'good-3', 'good-4', 'good-5']);
        const refusal = await store.db.selectFrom('refusals').selectAll().executeTakeFirstOrThrow();
        assert.equal(Number(refusal.count), 4);
        assert.match(refusal.last_detail, /holds U\+0000, which the console's database cannot store/);
        assert.ok(r.lines.some((l) => /"event":"console.message.refused".*"reason":"schema"/.test(l)));
        assert.ok(!r.lines.some((l) => /CONSOLE_STORE_FAILED/.test(l)), 'logged as the database failing');
      } finally {
        await r.close();
        await store.remove();
      }
    },
  );

  test(
    `${kind}: an event, a status and a health the database refuses are counted as refused and acknowledged`,
    { timeout: CHILD_DEADLINE_MS },
    async (t) => {
      const store = await openDatabase(t, kind);
      if (store === null) return;
      await refuseEventId(store, 'refuse-me');
      await refuseMachineRows(store);
      const r = await rig(store, `refused-${kind}`);
      try {
        await r.send('vm-2/status', status('vm-2', 'T2'), true);
        await waitFor('the good status', () => r.ingest.counters.statuses === 1);
        await r.send('vm-3/status', status('vm-3', 'refuse-me'), true);
        await r.send('vm-2/health', health('vm-2', 'refuse-me'));
        await r.send('vm-1/events', sale('vm-1', 'refuse-me'));
        await r.good();
        await waitFor('the good events stored', () => r.ingest.counters.stored === 5);
        await waitFor('the refused ones counted', () => r.ingest.counters.refused['store-refused'] === 3);
        await waitFor('every PUBACK', () => r.seen.pubacks === 8);
        assert.equal(r.seen.drops, 0, 'the ingest dropped its broker connection: a redelivery loop');
        assert.equal(r.ingest.counters.failedMessages, 0);
        assert.equal(r.ingest.counters.statuses, 1);
        const refusals = await store.db.selectFrom('refusals').select(['machine_id', 'last_detail']).execute();
        const byMachine = Object.fromEntries(refusals.map((x) => [x.machine_id, x.last_detail]));
        assert.match(byMachine['vm-3'] ?? '', /^status: .*refused by the test/);
        assert.match(byMachine['vm-2'] ?? '', /^health: .*refused by the test/);
        assert.match(byMachine['vm-1'] ?? '', /^event refuse-me: .*refused by the test/);
        assert.ok(r.lines.some((l) => /"reason":"store-refused".*the database itself works/.test(l)));
        assert.ok(!r.lines.some((l) => /CONSOLE_STORE_FAILED/.test(l)), 'logged as the database failing');
      } finally {
        await r.close();
        await store.remove();
      }
    },
  );
}

/** A rule refusing a machine row naming `refuse-me` (its terminal or its health), as a check constraint would. */
async function refuseMachineRows(store: TestStore): Promise<void> {
  const when = sql`new.terminal_id = 'refuse-me' or new.health like '%refuse-me%'`;
  if (store.dialect === 'sqlite') {
    for (const op of ['insert', 'update']) {
      await sql`create trigger ${sql.raw(`refuse_machine_${op}`)} before ${sql.raw(op)} on machines when ${when}
        begin select raise(abort, 'refused by the test'); end`.execute(store.db);
    }
    return;
  }
  await sql`create function refuse_machine() returns trigger language plpgsql as $$
    begin if ${when} then raise exception using errcode = 'check_violation', message = 'refused by the test';
    end if; return new; end $$`.execute(store.db);
  await sql`create trigger refuse_machine before insert or update on machines for each row
    execute function refuse_machine()`.execute(store.db);
}
