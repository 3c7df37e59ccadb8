import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { FleetEvent } from '../../../src/fleet/contract/index.js';
import { storeEventBatch } from '../../../src/console/store/event-batch.js';
import { salesByDay, salesByMachineDay } from '../../../src/console/store/report-queries.js';
import { DATABASES, openDatabase, stopDatabases } from './databases.js';
import { CHILD_DEADLINE_MS } from '../../support/deadlines.js';

after(stopDatabases);

const NOW = '2026-11-28T10:00:00.000Z';

/** A settled sale of 1.50 on that day and machine (cancelled when `cancel`). */
function sale(eventId: string, machineId: string, day: string, cancel = false) {
  const event = {
    kind: 'sale',
    eventId,
    at: `${day}T09:30:00.000Z`,
    machineId,
    txId: `tx-${eventId}`,
    flow: 'static',
    amount: '1.50',
    currency: 'EUR',
    products: [{ item: 3, price: '1.50', outcome: 'success' }],
    closing: cancel ? 'cancel' : 'settlement',
    verdict: 'accepted',
  } as FleetEvent;
  return { machineId, event, receivedAt: NOW, raw: JSON.stringify(event) };
}

for (const kind of DATABASES) {
  test(
    `${kind}: the fleet's days are kept as events arrive and match the machines' days`,
    {
      timeout: CHILD_DEADLINE_MS,
    },
    async (t) => {
      const store = await openDatabase(t, kind);
      if (store === null) return;
      try {
        const days = ['2026-11-25', '2026-11-26', '2026-11-27'];
        // 3 days x 7 machines x 2 sales, every fifth cancelled; the first batch comes again in the second.
        const events = days.flatMap((day, d) =>
          Array.from({ length: 14 }, (_, i) => sale(`e-${d}-${i}`, `vm-${i % 7}`, day, i % 5 === 0)),
        );
        await storeEventBatch(store.db, events.slice(0, 20));
        await storeEventBatch(store.db, events);
        const q = { from: days[0]!, to: days[2]!, machine: '', page: 1, pageSize: 5 };
        const fleet = await salesByDay(store.db, q);
        assert.deepEqual(
          fleet.map((d) => [d.day, d.paidCount, d.paidMilli, d.cancelledCount]),
          [
            ['2026-11-25', 11, 16_500n, 3],
            ['2026-11-26', 11, 16_500n, 3],
            ['2026-11-27', 11, 16_500n, 3],
          ],
        );
        const machineDays = await store.db
          .selectFrom('daily_totals')
          .select(['day', sql<number>`sum(paid_count)`.as('paid')])
          .groupBy('day')
          .orderBy('day')
          .execute();
        assert.deepEqual(
          machineDays.map((r) => Number(r.paid)),
          [11, 11, 11],
        );
        const one = await salesByDay(store.db, { ...q, machine: 'vm-0' });
        // vm-0 sells i = 0 (cancelled) and i = 7 each day.
        assert.deepEqual(
          one.map((d) => [d.day, d.paidCount, d.cancelledCount]),
          days.map((d) => [d, 1, 1]),
        );
      } finally {
        await store.remove();
      }
    },
  );

  test(
    `${kind}: machine-day pages follow one another in order, every row once`,
    { timeout: CHILD_DEADLINE_MS },
    async (t) => {
      const store = await openDatabase(t, kind);
      if (store === null) return;
      try {
        const days = ['2026-11-26', '2026-11-27'];
        await storeEventBatch(
          store.db,
          days.flatMap((day) => Array.from({ length: 7 }, (_, i) => sale(`${day}-${i}`, `vm-${i}`, day))),
        );
        const q = { from: days[0]!, to: days[1]!, machine: '', page: 1, pageSize: 5 };
        const pages = [];
        for (let page = 1; page <= 3; page++) pages.push(await salesByMachineDay(store.db, { ...q, page }));
        assert.deepEqual(
          pages.map((p) => p.total),
          [14, 14, 14],
        );
        const seen = pages.flatMap((p) => p.rows.map((r) => `${r.day} ${r.machineId}`));
        const expected = [...days].reverse().flatMap((day) => Array.from({ length: 7 }, (_, i) => `${day} vm-${i}`));
        assert.deepEqual(seen, expected);
        const all = await salesByMachineDay(store.db, q, true);
        assert.deepEqual(
          all.rows.map((r) => `${r.day} ${r.machineId}`),
          expected,
        );
        assert.equal(all.rows[0]!.paidMilli, 1500n);
      } finally {
        await store.remove();
      }
    },
  );
}
