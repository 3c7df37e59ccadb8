/**
 * The sale checker on hand-made records: it must catch every way a sale can go wrong, including a
 * loss in one flow that an over-charge in the other would hide if the flows were netted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSales } from '../../src/sim/checker.js';
import type { LedgerView, TxRecord } from '../../src/sim/gateway/index.js';
import type { SimSessionRecord } from '../../src/sim/vmc/index.js';

const none = { Settlement: 0, Cancel: 0, Void: 0 };

function tx(partial: Partial<TxRecord> & Pick<TxRecord, 'transactionId' | 'flow' | 'state'>): TxRecord {
  return {
    authorization: null,
    qr: null,
    settlement: null,
    cancel: null,
    void: null,
    requests: { Authorization: 0, Settlement: 0, Cancel: 0, GenerateQR: 0, Inquiry: 0, Void: 0 },
    accepted: { ...none },
    duplicates: { ...none },
    conflicts: [],
    ...partial,
  };
}

const approved = { verdict: 'Approved' as const, code: null, message: null };
const closing = (amount: number) => ({ ...approved, amount, reasonCode: null, gatewayTimeout: false, products: 1 });
const qr = (amount: number) => ({
  amount,
  srvTranId: 'S',
  rrn: 'R',
  qrCode: 'Q',
  createdAtMs: 0,
  behaviour: { kind: 'approve' } as const,
  polls: 1,
  paymentInfo: null,
  paymentInfoText: null,
  decimalPlaces: 2,
});

function view(txs: TxRecord[]): LedgerView {
  return {
    summary: {} as LedgerView['summary'],
    transactions: Object.fromEntries(txs.map((t) => [t.transactionId, t])),
    rejected: [],
  };
}

/** A funded (Static QR) session that dispensed these prices. */
const funded = (id: number, ...prices: number[]): SimSessionRecord => ({
  id,
  kind: 'funded',
  funds: 10,
  end: 'complete',
  vends: prices.map((p, i) => ({ item: i + 1, price: p, approved: p, outcome: 'success' as const })),
});
/** An always-idle (Dynamic QR) selection, dispensed or failed. */
const selection = (id: number, price: number, outcome: 'success' | 'failed'): SimSessionRecord => ({
  id,
  kind: 'always-idle',
  funds: null,
  end: 'complete',
  vends: [{ item: 9, price, approved: price, outcome }],
});
const settled = (id: string, amount: number) =>
  tx({
    transactionId: id,
    flow: 'static',
    state: 'settled',
    authorization: { ...approved, amount: 10, paymentInfo: null, paymentInfoText: null },
    settlement: closing(amount),
    accepted: { ...none, Settlement: 1 },
  });
const cancelled = (id: string) =>
  tx({
    transactionId: id,
    flow: 'static',
    state: 'cancelled',
    authorization: { ...approved, amount: 10, paymentInfo: null, paymentInfoText: null },
    cancel: closing(10),
    accepted: { ...none, Cancel: 1 },
  });
const paid = (id: string, amount: number) => tx({ transactionId: id, flow: 'dynamic', state: 'paid', qr: qr(amount) });
const voided = (id: string, amount: number) =>
  tx({
    transactionId: id,
    flow: 'dynamic',
    state: 'voided',
    qr: qr(amount),
    void: closing(amount),
    accepted: { ...none, Void: 1 },
  });

test('balanced: a settled session, a vended QR payment, a voided failed vend', () => {
  const check = checkSales(
    [funded(1, 1.5, 2), selection(2, 1.2, 'success'), selection(3, 0.8, 'failed')],
    view([settled('S1', 3.5), paid('D1', 1.2), voided('D2', 0.8)]),
  );
  assert.ok(check.ok, JSON.stringify(check));
  assert.deepEqual(check.dispensedSales, { static: 1, dynamic: 1 });
});

test('a lost static sale is not hidden by a dynamic over-charge of the same amount', () => {
  // The static session dispensed 1.50 but was cancelled; a dynamic vend of 1.50 failed but was not voided.
  const check = checkSales([funded(1, 1.5), selection(2, 1.5, 'failed')], view([cancelled('S1'), paid('D1', 1.5)]));
  assert.equal(check.ok, false);
  assert.equal(check.lostMinor, 150);
  assert.equal(check.chargedNotVendedMinor, 150);
});

test('two sales of one flow cannot net out either: the sale counts must match', () => {
  // Two dynamic vends dispensed at 1.00 each, but one payment of 2.00 charged.
  const check = checkSales([selection(1, 1, 'success'), selection(2, 1, 'success')], view([paid('D1', 2)]));
  assert.equal(check.lostMinor, 0);
  assert.equal(check.ok, false);
  assert.deepEqual([check.dispensedSales.dynamic, check.chargedSales.dynamic], [2, 1]);
});

test('charged twice and unresolved approvals are reported', () => {
  const twice = settled('S1', 1.5);
  twice.accepted.Cancel = 1;
  const open = tx({
    transactionId: 'S2',
    flow: 'static',
    state: 'authorized',
    authorization: { ...approved, amount: 10, paymentInfo: null, paymentInfoText: null },
  });
  const check = checkSales([funded(1, 1.5)], view([twice, open]));
  assert.deepEqual(check.chargedTwice, ['S1']);
  assert.deepEqual(check.unresolved, ['S2']);
  assert.equal(check.ok, false);
});

test('virtual-credit sessions count as Dynamic QR sales when mdb.virtualCredit is given', () => {
  const virtual: SimSessionRecord = {
    id: 1,
    kind: 'funded',
    funds: 50,
    end: 'complete',
    vends: [{ item: 1, price: 2, approved: 2, outcome: 'success' }],
  };
  assert.equal(checkSales([virtual], view([paid('D1', 2)])).ok, false, 'without the option the vend looks static');
  assert.ok(checkSales([virtual], view([paid('D1', 2)]), { virtualCredit: 50 }).ok);
});
