/**
 * Stock kept at ingest and the route's queries, on SQLite (and on PostgreSQL when
 * QRVEND_CONSOLE_TEST_PG names a server): a fill to par, QR sales (a dead-lettered payment accepted
 * later counted once) and a cash sale lower the levels, a DEX audit that counted more than our events
 * corrects them, a fill above capacity is refused whole, the pick list and the "price differs" list
 * are what the figures say (worked out by hand in the comments).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { storeEventBatch } from '../../../src/console/store/event-batch.js';
import type { IncomingEvent } from '../../../src/console/store/event-rows.js';
import type { FleetEvent } from '../../../src/fleet/contract/index.js';
import { pickList } from '../../../src/console/route/stock-math.js';
import { pricesDiffering, recordFill, selectionStates } from '../../../src/console/store/route-queries.js';
import { openTestStore, type TestStore } from '../support/store.js';

let store: TestStore;
const T0 = Date.UTC(2026, 10, 30, 8);
const H = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();

function incoming(machineId: string, event: Record<string, unknown>): IncomingEvent {
  const e = { machineId, at: iso(T0 + H), ...event } as unknown as FleetEvent;
  return { machineId, event: e, receivedAt: iso(T0 + H), raw: JSON.stringify(e) };
}

function sale(eventId: string, verdict: 'accepted' | 'dead-letter') {
  return incoming('M1', {
    kind: 'sale',
    eventId,
    txId: 'tx-1',
    flow: 'static',
    amount: '3.00',
    currency: 'EUR',
    products: [
      { item: 12, price: '1.50', outcome: 'success' },
      { item: 12, price: '1.50', outcome: 'success' },
      { item: 21, price: '2.00', outcome: 'failed' },
    ],
    closing: 'settlement',
    verdict,
  });
}

before(async () => {
  store = await openTestStore();
  const db = store.db;
  await db
    .insertInto('templates')
    .values({ template_id: 'T1', model: 'SnackPro 40', updated_at: iso(T0) })
    .execute();
  await db
    .insertInto('template_selections')
    .values([
      {
        template_id: 'T1',
        selection: 12,
        product_code: 'WATER',
        capacity: 20,
        par: 16,
        threshold: 4,
        price_milli: 1500,
      },
      { template_id: 'T1', selection: 21, product_code: 'COLA', capacity: 10, par: 8, threshold: 2, price_milli: 2000 },
    ])
    .execute();
  await db.insertInto('machine_templates').values({ machine_id: 'M1', template_id: 'T1' }).execute();
});

after(async () => store?.remove());

test('a fill, sales and an audit that disagrees: the levels, the pick list, the prices asked', async () => {
  const db = store.db;
  assert.deepEqual(await recordFill(db, { machineId: 'M1', counts: 'par', user: 'dana', note: '', nowMs: T0 }), {
    '12': 16,
    '21': 8,
  });
  await storeEventBatch(db, [sale('e-1', 'dead-letter')]);
  // The same payment accepted after a retry: a second event, the same vends, counted once.
  await storeEventBatch(db, [
    sale('e-2', 'accepted'),
    incoming('M1', { kind: 'cash-sale', eventId: 'c-1', item: 21, price: '2.10', currency: 'EUR' }),
  ]);
  let states = await selectionStates(db, ['M1'], T0 + H);
  // 12: 16 - 2 = 14 (the failed vend of 21 is no vend); 21: 8 - 1 cash sale = 7.
  assert.deepEqual(
    states.map((s) => [s.selection, s.level]),
    [
      [12, 14],
      [21, 7],
    ],
  );
  // The audit read at T0 + 2 h over the 2 h since the last read: 5 vends of 12 (3 by coins we never
  // saw: 5 - 2 = 3 more), 1 of 21 (the cash sale: agrees).
  await storeEventBatch(db, [
    incoming('M1', {
      kind: 'audit',
      eventId: 'a-1',
      at: iso(T0 + 2 * H),
      auditId: 'A1',
      part: 0,
      parts: 1,
      raw: '',
      summary: { interval: { kind: 'sales', elapsedMs: 2 * H, sales: { products: { '12': 5, '21': 1 } } } },
    }),
  ]);
  const now = T0 + 2 * H;
  states = await selectionStates(db, ['M1'], now);
  assert.deepEqual(
    states.map((s) => [s.selection, s.level]),
    [
      [12, 11],
      [21, 7],
    ],
  );
  const diffs = await db
    .selectFrom('stock_audits')
    .select(['selection', 'dex_vends', 'our_vends', 'correction'])
    .orderBy('selection')
    .execute();
  assert.deepEqual(
    diffs.map((d) => [Number(d.selection), Number(d.dex_vends), Number(d.our_vends), Number(d.correction)]),
    [
      [12, 5, 2, 3],
      [21, 1, 1, 0],
    ],
  );
  // Rates: 12 sold 5 in 2 h, counted as a day: 5/day; the pick list at the visit now: 16 - 11 = 5 and 8 - 7 = 1.
  assert.equal(states[0]!.ratePerDay, 5);
  assert.deepEqual(pickList(states, now, now), [
    { productCode: 'WATER', quantity: 5, selections: 1 },
    { productCode: 'COLA', quantity: 1, selections: 1 },
  ]);
  // The VMC asked 2.10 for 21 (the cash sale), the planogram says 2.00; 12's 1.50 agrees.
  assert.deepEqual(await pricesDiffering(db), [
    { machineId: 'M1', selection: 21, intendedMilli: 2000, askedMilli: 2100, askedAt: iso(T0 + H) },
  ]);
});

test('a fill above capacity or below zero is refused whole; a fill resets the level', async () => {
  const db = store.db;
  await assert.rejects(
    recordFill(db, { machineId: 'M1', counts: { '12': 10, '21': 11 }, user: 'dana', note: '', nowMs: T0 + 3 * H }),
    /selection 21: 11 is more than its capacity of 10/,
  );
  await assert.rejects(
    recordFill(db, { machineId: 'M1', counts: { '12': -1 }, user: 'dana', note: '', nowMs: T0 + 3 * H }),
    /below zero/,
  );
  let states = await selectionStates(db, ['M1'], T0 + 3 * H);
  assert.deepEqual(
    states.map((s) => s.level),
    [11, 7],
    'nothing of a refused fill is kept',
  );
  await recordFill(db, {
    machineId: 'M1',
    counts: { '12': 20 },
    user: 'dana',
    note: 'new pack size',
    nowMs: T0 + 3 * H,
  });
  states = await selectionStates(db, ['M1'], T0 + 3 * H);
  assert.deepEqual(
    states.map((s) => s.level),
    [20, 7],
  );
  const fills = await db.selectFrom('fills').select(['by_user', 'note']).orderBy('id').execute();
  assert.deepEqual(
    fills.map((f) => [f.by_user, f.note]),
    [
      ['dana', ''],
      ['dana', 'new pack size'],
    ],
  );
});
