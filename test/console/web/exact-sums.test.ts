/**
 * Amounts stay exact (docs/console.md, "How an event is kept"): eleven sales of 999999999999.999
 * on one machine and day sum to 10999999999999.989 on the sales page and in the CSV export, past
 * 2^53 thousandths where a Number would round it (to ...988). A sale that would carry a day's total
 * past what a 64-bit integer holds is refused, counted and acknowledged, on either database, and
 * the totals stay as they were. Through the real console: the broker, ingest, the pages over
 * HTTP; SQLite, and PostgreSQL where it is installed.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN, startConsoleApp } from '../support/console-app.js';
import { waitFor } from '../support/wait.js';
import { WebClient } from '../support/web-client.js';
import { DATABASES, openDatabase, stopDatabases } from '../store/databases.js';
import { CHILD_DEADLINE_MS } from '../../support/deadlines.js';

after(stopDatabases);

const DAY = '2026-11-28';
const sale = (machineId: string, eventId: string, amount: string) => ({
  kind: 'sale',
  eventId,
  at: `${DAY}T09:00:00.000Z`,
  machineId,
  txId: `tx-${eventId}`,
  flow: 'static',
  amount,
  currency: 'EUR',
  products: [],
  closing: 'settlement',
  verdict: 'accepted',
});

for (const kind of DATABASES) {
  test(
    `${kind}: sums past 2^53 thousandths are exact on the page and in the CSV`,
    { timeout: CHILD_DEADLINE_MS },
    async (t) => {
      const store = await openDatabase(t, kind);
      if (store === null) return;
      const app = await startConsoleApp({}, { store });
      try {
        for (let i = 0; i < 11; i++)
          await app.publish('vm-big', 'events', sale('vm-big', `big-${i}`, '999999999999.999'));
        await app.waitStored(11);
        const c = new WebClient(app.url);
        await c.login(ADMIN.name, ADMIN.password);
        const page = await c.request(`/sales?from=${DAY}&to=${DAY}`);
        assert.equal(page.status, 200);
        const exact = '10999999999999.989';
        assert.match(
          page.text,
          new RegExp(`<td class="num">${exact.replace('.', '\\.')}</td>\\s*<td class="num">11</td>`),
        );
        for (const table of ['sales-days', 'sales-machines']) {
          const shown = new RegExp(`id="${table}"[\\s\\S]*?</table>`).exec(page.text)?.[0] ?? '';
          assert.ok(shown.includes(`>${exact}<`), `${table} does not show ${exact}`);
        }
        const csv = await c.request(`/sales.csv?from=${DAY}&to=${DAY}`);
        assert.match(csv.text, new RegExp(`^${DAY},vm-big,EUR,${exact.replace('.', '\\.')},11,`, 'm'));
      } finally {
        await app.close();
      }
    },
  );

  test(
    `${kind}: a sale that would pass a 64-bit day total is refused; the totals stay`,
    { timeout: CHILD_DEADLINE_MS },
    async (t) => {
      const store = await openDatabase(t, kind);
      if (store === null) return;
      const app = await startConsoleApp({}, { store });
      try {
        await app.publish('vm-max', 'events', sale('vm-max', 'first', '1.000'));
        await app.waitStored(1);
        // The machine's day already near the top of a 64-bit integer (9223372036854775807 thousandths);
        // the fleet's day would refuse alike.
        const near = 9223372036854775000n;
        await store.db.updateTable('daily_totals').set({ paid_milli: near }).execute();
        await app.publish('vm-max', 'events', sale('vm-max', 'over', '1.000'));
        await app.publish('vm-other', 'events', sale('vm-other', 'other', '2.000'));
        await waitFor('the sale refused', () => app.running.ingest.counters.refused['store-refused'] === 1);
        await waitFor('the next event stored', () => app.running.ingest.counters.stored === 2);
        assert.equal(app.running.ingest.counters.failedMessages, 0);
        const totals = await store.db.selectFrom('daily_totals').select(['machine_id', 'paid_count']).execute();
        assert.deepEqual(totals.map((r) => [r.machine_id, Number(r.paid_count)]).sort(), [
          ['vm-max', 1],
          ['vm-other', 1],
        ]);
        const c = new WebClient(app.url);
        await c.login(ADMIN.name, ADMIN.password);
        const page = await c.request(`/sales?from=${DAY}&to=${DAY}&machine=vm-max`);
        assert.ok(page.text.includes('9223372036854775.00'), 'the near-maximum total is shown exactly');
      } finally {
        await app.close();
      }
    },
  );
}
