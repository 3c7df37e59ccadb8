import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { FleetEvent } from '../../../src/fleet/contract/index.js';
import { databaseUnavailable, refusedByDatabase, storeEventBatch } from '../../../src/console/store/event-batch.js';
import { storableText, unstorableText } from '../../../src/console/store/storable-text.js';
import type { IncomingEvent } from '../../../src/console/store/ingest-queries.js';
import type { TestStore } from '../support/store.js';
import { DATABASES, openDatabase, refuseEventId, stopDatabases } from './databases.js';
import { CHILD_DEADLINE_MS } from '../../support/deadlines.js';

after(stopDatabases);

const NOW = '2026-11-28T10:00:00.000Z';

function sale(eventId: string, machineId = 'vm-1'): IncomingEvent {
  const event = {
    kind: 'sale',
    eventId,
    at: '2026-11-27T09:30:00.000Z',
    machineId,
    txId: `tx-${eventId}`,
    flow: 'static',
    amount: '1.50',
    currency: 'EUR',
    products: [{ item: 3, price: '1.50', outcome: 'success' }],
    closing: 'settlement',
    verdict: 'accepted',
  } as FleetEvent;
  return { machineId, event, receivedAt: NOW, raw: JSON.stringify(event) };
}

async function paidCount(store: TestStore): Promise<number> {
  const row = await store.db
    .selectFrom('daily_totals')
    .select(sql<number>`coalesce(sum(paid_count), 0)`.as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

for (const kind of DATABASES) {
  test(`${kind}: a batch commits all or nothing`, { timeout: CHILD_DEADLINE_MS }, async (t) => {
    const store = await openDatabase(t, kind);
    if (store === null) return;
    try {
      await refuseEventId(store, 'poison');
      await assert.rejects(storeEventBatch(store.db, [sale('e1'), sale('e2', 'vm-2'), sale('poison')]));
      assert.deepEqual(await store.db.selectFrom('events').select('event_id').execute(), []);
      assert.deepEqual(await store.db.selectFrom('sales').select('event_id').execute(), []);
      assert.deepEqual(await store.db.selectFrom('machines').select('machine_id').execute(), []);
      assert.equal(await paidCount(store), 0);
      assert.deepEqual(await storeEventBatch(store.db, [sale('e1'), sale('e2', 'vm-2')]), [true, true]);
      assert.equal(await paidCount(store), 2);
    } finally {
      await store.remove();
    }
  });

  test(
    `${kind}: an event redelivered, in the same batch or a later one, is stored and counted once`,
    {
      timeout: CHILD_DEADLINE_MS,
    },
    async (t) => {
      const store = await openDatabase(t, kind);
      if (store === null) return;
      try {
        assert.deepEqual(await storeEventBatch(store.db, [sale('e1'), sale('e1'), sale('e2')]), [true, false, true]);
        assert.deepEqual(await storeEventBatch(store.db, [sale('e2'), sale('e3')]), [false, true]);
        // The same eventId from another machine is another event (the key is machine and eventId).
        assert.deepEqual(await storeEventBatch(store.db, [sale('e1', 'vm-2')]), [true]);
        const events = await store.db.selectFrom('events').select(['machine_id', 'event_id']).execute();
        assert.equal(events.length, 4);
        assert.equal(await paidCount(store), 4);
      } finally {
        await store.remove();
      }
    },
  );
}

test('a lost database is told apart from an event the database refuses', () => {
  assert.equal(databaseUnavailable(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' })), true);
  assert.equal(databaseUnavailable(Object.assign(new Error('refused'), { code: 'SQLITE_CONSTRAINT_TRIGGER' })), false);
  assert.equal(databaseUnavailable(Object.assign(new Error('shutting down'), { code: '57P01' })), true);
  assert.equal(databaseUnavailable(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })), true);
  assert.equal(databaseUnavailable(new Error('Connection terminated unexpectedly')), true);
  assert.equal(databaseUnavailable(Object.assign(new Error('invalid byte'), { code: '22021' })), false);
});

test("only data errors are the row's own: refused; connection and other failures are not", () => {
  const err = (code?: string) => Object.assign(new Error('x'), code === undefined ? {} : { code });
  for (const code of ['22021', '22003', '23505', '23514', '54000', 'SQLITE_CONSTRAINT_CHECK', 'SQLITE_TOOBIG'])
    assert.equal(refusedByDatabase(err(code)), true, code);
  for (const code of [
    undefined,
    '08006',
    '57P01',
    '40P01',
    '42P01',
    'P0001',
    'ECONNRESET',
    'SQLITE_IOERR',
    'SQLITE_ERROR',
  ])
    assert.equal(refusedByDatabase(err(code)), false, String(code));
});

test('text the database cannot hold is found anywhere in a message, and escaped where it is recorded', () => {
  assert.equal(unstorableText({ a: ['ok', { b: 'é😀' }] }), null);
  assert.match(unstorableText({ eventId: 'a\u0000b' }) ?? '', /^eventId: holds U\+0000/);
  assert.match(unstorableText({ stats: { list: ['x', '\ud800'] } }) ?? '', /^stats\.list\.1: .*surrogate U\+D800/);
  assert.match(unstorableText({ stats: { 'k\u0000': 1 } }) ?? '', /^stats\.k\\u0000: a key holds U\+0000/);
  let deep: unknown = 'a\u0000';
  for (let i = 0; i < 50_000; i++) deep = [deep];
  assert.match(unstorableText(deep) ?? '', /holds U\+0000/);
  assert.equal(storableText('a\u0000b\udc00c😀'), 'a\\u0000b\\udc00c😀');
});
