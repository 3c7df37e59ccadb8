import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FleetEvent, StatusMessage } from '../../../src/fleet/contract/index.js';
import { countRefusal, storeEvent, storeStatus, toMilli } from '../../../src/console/store/ingest-queries.js';
import { openTestStore } from '../support/store.js';

const NOW = '2026-11-28T10:00:00.000Z';

function sale(eventId: string, amount: string, extra: Partial<FleetEvent> = {}): FleetEvent {
  return {
    kind: 'sale',
    eventId,
    at: '2026-11-27T09:30:00.000Z',
    machineId: 'vm-1',
    txId: `tx-${eventId}`,
    flow: 'static',
    amount,
    currency: 'EUR',
    products: [{ item: 3, price: amount, outcome: 'success' }],
    closing: 'settlement',
    verdict: 'accepted',
    ...extra,
  } as FleetEvent;
}

test('amounts become exact thousandths; anything else is refused', () => {
  assert.equal(toMilli('1.50'), 1500n);
  assert.equal(toMilli('0.005'), 5n);
  assert.equal(toMilli('12'), 12000n);
  assert.equal(toMilli('1.5000'), null);
  assert.equal(toMilli('-1.00'), null);
  assert.equal(toMilli('1e3'), null);
});

test(
  'an event redelivered with the same eventId is stored once and counted once in the day',
  { timeout: 60_000 },
  async () => {
    const store = await openTestStore();
    try {
      const raw = JSON.stringify(sale('e1', '1.50'));
      assert.equal(await storeEvent(store.db, 'vm-1', sale('e1', '1.50'), NOW, raw), true);
      assert.equal(await storeEvent(store.db, 'vm-1', sale('e1', '1.50'), NOW, raw), false);
      await storeEvent(store.db, 'vm-1', sale('e2', '2.25'), NOW, raw);
      await storeEvent(
        store.db,
        'vm-1',
        sale('e3', '9.99', { verdict: 'dead-letter' } as Partial<FleetEvent>),
        NOW,
        raw,
      );
      await storeEvent(store.db, 'vm-1', sale('e4', '1.00', { closing: 'cancel' } as Partial<FleetEvent>), NOW, raw);
      const cash = {
        kind: 'cash-sale',
        eventId: 'c1',
        at: '2026-11-27T11:00:00Z',
        machineId: 'vm-1',
        item: 4,
        price: '0.80',
        currency: 'EUR',
      };
      await storeEvent(store.db, 'vm-1', cash as FleetEvent, NOW, '{}');
      const events = await store.db
        .selectFrom('events')
        .select(({ fn }) => fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(events.n), 5);
      const day = await store.db.selectFrom('daily_totals').selectAll().executeTakeFirstOrThrow();
      assert.deepEqual(
        {
          day: day.day,
          paid: [Number(day.paid_count), Number(day.paid_milli)],
          cash: [Number(day.cash_count), Number(day.cash_milli)],
        },
        { day: '2026-11-27', paid: [2, 3750], cash: [1, 800] },
      );
      assert.deepEqual([Number(day.dead_count), Number(day.dead_milli), Number(day.cancelled_count)], [1, 9990, 1]);
      const machine = await store.db
        .selectFrom('machines')
        .selectAll()
        .where('machine_id', '=', 'vm-1')
        .executeTakeFirstOrThrow();
      assert.equal(machine.last_sale_at, '2026-11-27T11:00:00Z');
    } finally {
      await store.remove();
    }
  },
);

test('an alarm raised twice opens one row; cleared, it closes it', { timeout: 60_000 }, async () => {
  const store = await openTestStore();
  try {
    const alarm = (eventId: string, state: 'raised' | 'cleared', at: string) =>
      ({
        kind: 'alarm',
        eventId,
        at,
        machineId: 'vm-1',
        code: 'BOARD_SILENT',
        state,
        detail: `d-${eventId}`,
      }) as FleetEvent;
    await storeEvent(store.db, 'vm-1', alarm('a1', 'raised', '2026-11-28T08:00:00Z'), NOW, '{}');
    await storeEvent(store.db, 'vm-1', alarm('a2', 'raised', '2026-11-28T08:01:00Z'), NOW, '{}');
    let rows = await store.db.selectFrom('alarms').selectAll().execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.cleared_at, null);
    await storeEvent(store.db, 'vm-1', alarm('a3', 'cleared', '2026-11-28T08:05:00Z'), NOW, '{}');
    rows = await store.db.selectFrom('alarms').selectAll().execute();
    assert.deepEqual(
      rows.map((r) => [r.raised_at, r.cleared_at, r.cleared_detail]),
      [['2026-11-28T08:00:00Z', '2026-11-28T08:05:00Z', 'd-a3']],
    );
  } finally {
    await store.remove();
  }
});

test('a status row per change, the last will keeps what the machine said before', { timeout: 60_000 }, async () => {
  const store = await openTestStore();
  try {
    const status: StatusMessage = {
      online: true,
      machineId: 'vm-1',
      terminalId: 'T1',
      uniQr: null,
      version: '1.2.3',
      startedAt: NOW,
      reader: 'enabled',
      readerDisabledRemotely: false,
      gateway: 'online',
      outbox: { pending: 2, dead: 1 },
      alarms: ['OUTBOX_DEAD_LETTER'],
      acceptsRelayedStart: false,
      at: NOW,
    };
    await storeStatus(store.db, 'vm-1', status, NOW);
    await storeStatus(store.db, 'vm-1', status, '2026-11-28T10:00:05.000Z');
    await storeStatus(store.db, 'vm-1', { online: false }, '2026-11-28T10:01:00.000Z');
    const history = await store.db.selectFrom('status_history').selectAll().orderBy('id').execute();
    assert.deepEqual(
      history.map((h) => [h.online, h.version, h.outbox_dead]),
      [
        [1, '1.2.3', 1],
        [0, '1.2.3', 1],
      ],
    );
    const machine = await store.db.selectFrom('machines').selectAll().executeTakeFirstOrThrow();
    assert.deepEqual([machine.online, machine.version, machine.alarms], [0, '1.2.3', 'OUTBOX_DEAD_LETTER']);
  } finally {
    await store.remove();
  }
});

test('refusals are counted per machine and reason, not one row each', { timeout: 60_000 }, async () => {
  const store = await openTestStore();
  try {
    for (let i = 0; i < 5; i++) await countRefusal(store.db, 'vm-9', 'schema', `amount: bad ${i}`, NOW);
    await countRefusal(store.db, null, 'topic', 'not a fleet topic', NOW);
    const rows = await store.db.selectFrom('refusals').selectAll().orderBy('reason').execute();
    assert.deepEqual(
      rows.map((r) => [r.machine_id, r.reason, Number(r.count), r.last_detail]),
      [
        ['vm-9', 'schema', 5, 'amount: bad 4'],
        ['', 'topic', 1, 'not a fleet topic'],
      ],
    );
  } finally {
    await store.remove();
  }
});
