/**
 * Cash sales in the ledger (docs/decisions/real-vending-machines.md item 7): one small row each, never a transaction or
 * an
 * outbox request (never charged), its fleet event in the same SQLite transaction, valid against
 * the fleet contract; pruned with the outbox's retention; the table arrives by migration 6.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { FleetEvent } from '../../src/fleet/contract/index.js';
import { ManualClock, openTest, tempLedgerPath } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

test(
  'a cash sale is one row and, with the fleet link on, one cash-sale event; nothing is owed to the gateway',
  T,
  () => {
    const tmp = tempLedgerPath();
    try {
      const clock = new ManualClock();
      const ledger = openTest(tmp.path, clock);
      ledger.cashSales.record({ price: 0.29, item: 7 }); // fleet link off: the row only
      assert.deepEqual(ledger.fleetEvents.pending(0, 10), []);
      ledger.fleetEvents.enable({ machineId: 'M1', currencyCode: 'EUR', maxQueuedAlarms: 10 });
      let wakeups = 0;
      ledger.fleetEvents.onWritten(() => (wakeups += 1));
      const row = ledger.cashSales.record({ price: 4.35, item: 32780 }); // b15 set: a free vend, as the VMC flagged it
      assert.equal(row.priceMinor, 435);
      assert.deepEqual(ledger.cashSales.totals(), { count: 2, sumMinor: 464 });
      assert.equal(ledger.outbox.counts().pending, 0, 'never charged');
      assert.deepEqual(ledger.unresolvedTransactions(), []);
      const events = ledger.fleetEvents.pending(0, 10);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.kind, 'sale', 'queued in the class that is never dropped');
      assert.equal(wakeups, 1);
      const body = FleetEvent.parse(JSON.parse(events[0]!.body));
      assert.deepEqual(
        { ...body, eventId: 'x', at: 'x' },
        { kind: 'cash-sale', eventId: 'x', at: 'x', machineId: 'M1', item: 32780, price: '4.35', currency: 'EUR' },
      );
      ledger.close();
    } finally {
      tmp.cleanup();
    }
  },
);

test('cash-sale rows go with the outbox retention', T, () => {
  const tmp = tempLedgerPath();
  try {
    const clock = new ManualClock();
    const ledger = openTest(tmp.path, clock);
    ledger.cashSales.record({ price: 1.15, item: 12 });
    clock.ms += 10 * 86_400_000;
    ledger.cashSales.record({ price: 0.29, item: 7 });
    ledger.outbox.prune(clock.ms, 5 * 86_400_000);
    assert.deepEqual(ledger.cashSales.totals(), { count: 1, sumMinor: 29 });
    ledger.close();
  } finally {
    tmp.cleanup();
  }
});

test('a schema-5 ledger gets the cash_sales table (migration 6) and keeps its rows', T, () => {
  const tmp = tempLedgerPath();
  try {
    const clock = new ManualClock();
    let ledger = openTest(tmp.path, clock);
    ledger.acceptStart({ txId: 'S-v5-aaaaaa', appUserId: 'u', balance: null });
    ledger.close();
    const db = new Database(tmp.path);
    db.exec('DROP TABLE cash_sales; DROP TABLE dex_audits');
    db.pragma('user_version = 5');
    db.close();
    ledger = openTest(tmp.path, clock);
    assert.equal(ledger.getTransaction('S-v5-aaaaaa')?.state, 'start_accepted');
    ledger.cashSales.record({ price: 1.15, item: 12 });
    assert.deepEqual(ledger.cashSales.totals(), { count: 1, sumMinor: 115 });
    ledger.close();
  } finally {
    tmp.cleanup();
  }
});
