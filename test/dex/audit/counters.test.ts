/** Interval sales from lifetime counters and the reconciliation, over the fixture series a1 -> a2 -> a3 -> a4. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { examineAuditFile } from '../../../src/dex/file/index.js';
import { intervalSales, snapshotOf, type CounterSnapshot } from '../../../src/dex/audit/counters.js';
import { reconcile } from '../../../src/dex/audit/reconcile.js';

const snap = (name: string) =>
  snapshotOf(examineAuditFile(readFileSync(new URL(`../../../../test/fixtures/dex/${name}`, import.meta.url))).audit!);
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 25, 5);

test('the first audit starts a series and has no sales', () => {
  assert.equal(intervalSales(null, { snapshot: snap('vmc-a1.dex'), atMs: T0 }).kind, 'first');
});

test('a1 -> a2: sales are the lifetime deltas (cash 6, cashless #1 12, cashless #2 3) and per selection', () => {
  const r = intervalSales({ snapshot: snap('vmc-a1.dex'), atMs: T0 }, { snapshot: snap('vmc-a2.dex'), atMs: T0 + DAY });
  assert.equal(r.kind, 'sales');
  if (r.kind !== 'sales') return;
  assert.deepEqual(r.sales.cash, { value: 860, count: 6 });
  assert.deepEqual(r.sales.cashless1, { value: 1800, count: 12 });
  assert.deepEqual(r.sales.cashless2, { value: 390, count: 3 });
  assert.deepEqual(r.sales.paid, { value: 3050, count: 21 });
  assert.deepEqual(r.sales.products, { '11': 10, '12': 7, '13': 4 });
  assert.equal(r.elapsedMs, DAY);
});

test('a2 -> a3: a VMC resetting its interval counters on read still gives the right sales (lifetime counters)', () => {
  const r = intervalSales(
    { snapshot: snap('vmc-a2.dex'), atMs: T0 + DAY },
    { snapshot: snap('vmc-a3-reset-on-read.dex'), atMs: T0 + 2 * DAY },
  );
  assert.equal(r.kind, 'sales');
  if (r.kind === 'sales') assert.deepEqual(r.sales.cashless1, { value: 390, count: 3 });
});

test('a3 -> a4: lifetime counters went down (board swap): a new series, said so, no sales', () => {
  const r = intervalSales(
    { snapshot: snap('vmc-a3-reset-on-read.dex'), atMs: T0 + 2 * DAY },
    { snapshot: snap('vmc-a4-board-swap.dex'), atMs: T0 + 3 * DAY },
  );
  assert.equal(r.kind, 'new-series');
  if (r.kind === 'new-series')
    assert.match(r.reason, /^VA102 \(vends\) went down from 1060 to 10: the VMC's control board was swapped/);
});

test(
  'a jump more than a machine can vend in the elapsed time starts ' +
    'a new series; the same jump over a longer time is sales',
  () => {
    const a = snap('vmc-a1.dex');
    const b: CounterSnapshot = structuredClone(a);
    b.cash = { value: a.cash.value! + 500 * 120, count: a.cash.count! + 500 };
    b.paid = { value: a.paid.value! + 500 * 120, count: a.paid.count! + 500 };
    const tenMinutes = intervalSales({ snapshot: a, atMs: T0 }, { snapshot: b, atMs: T0 + 10 * 60_000 });
    assert.equal(tenMinutes.kind, 'new-series');
    if (tenMinutes.kind === 'new-series')
      assert.match(
        tenMinutes.reason,
        /^VA102 jumped by 500 vends in 10 min, more than a machine can vend \(at most 170\)/,
      );
    assert.equal(intervalSales({ snapshot: a, atMs: T0 }, { snapshot: b, atMs: T0 + DAY }).kind, 'sales');
  },
);

test('a value that grew more than count x highest price starts a new series', () => {
  const a = snap('vmc-a1.dex');
  const b: CounterSnapshot = structuredClone(a);
  b.cashless1 = { value: a.cashless1.value! + 2 * 200 + 1, count: a.cashless1.count! + 2 };
  const r = intervalSales({ snapshot: a, atMs: T0 }, { snapshot: b, atMs: T0 + DAY });
  assert.equal(r.kind, 'new-series');
  if (r.kind === 'new-series')
    assert.match(r.reason, /^DA201 grew by 401 for 2 vends, more than the highest price \(200\)/);
  b.cashless1 = { value: a.cashless1.value! + 2 * 200, count: a.cashless1.count! + 2 };
  assert.equal(intervalSales({ snapshot: a, atMs: T0 }, { snapshot: b, atMs: T0 + DAY }).kind, 'sales');
});

test('another machine serial on the line starts a new series', () => {
  const a = snap('vmc-a1.dex');
  const r = intervalSales(
    { snapshot: a, atMs: T0 },
    { snapshot: { ...snap('vmc-a2.dex'), serial: 'OTHER1' }, atMs: T0 + DAY },
  );
  assert.equal(r.kind, 'new-series');
});

test('reconcile: DA for cashless1, DB for cashless2; beyond the tolerance is a mismatch with both figures', () => {
  const interval = intervalSales(
    { snapshot: snap('vmc-a1.dex'), atMs: T0 },
    { snapshot: snap('vmc-a2.dex'), atMs: T0 + DAY },
  );
  const ledger = (count: number) => ({ count, valueMinor: count * 150, decimalPlaces: 2 });
  const ok = reconcile({ device: 'cashless1', interval, ledger: ledger(12), vmcDecimalPlaces: 2, tolerance: 0 });
  assert.equal(ok.status, 'match');
  const off = reconcile({ device: 'cashless1', interval, ledger: ledger(11), vmcDecimalPlaces: 2, tolerance: 0 });
  assert.equal(off.status, 'mismatch');
  if (off.status === 'mismatch') {
    assert.equal(off.difference, 1);
    assert.equal(off.record, 'DA2');
    assert.match(
      off.message,
      /the VMC counted 12 vends \(DA2, value 1800 at 2 decimals\), qrvend's ledger 11 \(value 1650 at 2 decimals\)/,
    );
  }
  assert.equal(
    reconcile({ device: 'cashless1', interval, ledger: ledger(11), vmcDecimalPlaces: 2, tolerance: 1 }).status,
    'match',
  );
  assert.equal(
    reconcile({ device: 'cashless1', interval, ledger: ledger(13), vmcDecimalPlaces: 2, tolerance: 0 }).status,
    'mismatch',
  );
  const db = reconcile({ device: 'cashless2', interval, ledger: ledger(3), vmcDecimalPlaces: 2, tolerance: 0 });
  assert.equal(db.status, 'match');
  if (db.status === 'match') assert.equal(db.record, 'DB2');
});

test('reconcile is skipped, with the reason, when there is no interval or no counter', () => {
  const first = reconcile({
    device: 'cashless1',
    interval: { kind: 'first', reason: 'the first audit read' },
    ledger: { count: 3, valueMinor: 0, decimalPlaces: 2 },
    vmcDecimalPlaces: 2,
    tolerance: 0,
  });
  assert.deepEqual(first, { status: 'skipped', reason: 'no interval to compare: the first audit read' });
  const noDb = reconcile({
    device: 'cashless2',
    interval: {
      kind: 'sales',
      elapsedMs: DAY,
      sales: {
        paid: { value: 1, count: 1 },
        cash: { value: 1, count: 1 },
        cashless1: { value: 0, count: 0 },
        cashless2: { value: null, count: null },
        products: {},
      },
    },
    ledger: { count: 3, valueMinor: 0, decimalPlaces: 2 },
    vmcDecimalPlaces: 2,
    tolerance: 0,
  });
  assert.equal(noDb.status, 'skipped');
});
