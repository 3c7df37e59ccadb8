/**
 * End to end, the MDB standard's money rules on real VMCs (docs/decisions/real-vending-machines.md
 * items 1, 6, 7): the real daemon wiring in this process on the in-memory wire
 * (rigs/in-process-rig.ts), the VMC simulator, the gateway simulator behind the recording proxy.
 * - MDB 4.2 7.4.7: a reset between VEND APPROVED and the vend result (c,ERR,VEND 5 then INACTIVE,
 *   INACTIVE alone, a board restart) is a VEND SUCCESS: static, the vend is in the Settlement's
 *   amount and Products; dynamic, the sale stands (no Void). c,ERR,VEND 3 stays uncharged.
 * - The VMC takes the selection elsewhere (disables this reader, or cancels) while a dynamic QR
 *   payment is pending: no vend, nothing charged, and a payment that was made is voided.
 * - Cash sales the VMC reports: recorded, counted in the stats line, never sent to the gateway;
 *   the board's lines of its other roles are counted by kind, not as noise.
 * Prices such as 0.29, 1.15 and 4.35 keep binary-unfriendly amounts in play.
 */
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { memberText } from '../../src/gateway/wire/index.js';
import { reportCashSale, resetSeenAsInactive } from '../../src/sim/vmc/index.js';
import {
  assertLedgerClean,
  assertSalesBalance,
  createInProcessBench,
  lastSession,
  logMark,
  setReaderEnabled,
  until,
  vmcIdle,
  waitLogAfter,
  waitTx,
  type Bench,
} from './support/e2e-rig.js';
import type { InProcessRig } from '../../rigs/in-process-rig.js';
import { buy, openSession, select } from './support/static-session.js';
import { selectAndPay } from './support/dynamic-payment.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

let bench: Bench<InProcessRig>;
const T = { timeout: TEST_DEADLINE_MS };

before(async () => {
  bench = await createInProcessBench({
    vmc: { vendPolicy: 'manual' },
    config: {
      gateway: { timeoutMs: 1000 },
      // This file resets the VMC in test after test: not a reset loop to hold the reader off for.
      mdb: { alwaysIdle: true, maxResponseTimeS: 6, resetLoop: { count: 1000, windowS: 600 } },
      dynamicQr: { paymentTimeoutMs: 1500, pollIntervalMs: 100 },
      log: { statsIntervalMs: 250 },
    },
  });
});
after(async () => bench?.close());
afterEach(async () => {
  bench.proxy.hangWhen(null);
  assertLedgerClean(bench.rig);
  assertSalesBalance(bench.rig);
  await vmcIdle(bench.rig);
});

function member(text: string | null, ...path: string[]): string | null {
  let cur: string | null = text;
  for (const name of path) cur = cur === null ? null : memberText(cur, name);
  return cur;
}

/** The Settlement the gateway received for `txId`: its amount and Products (codes and prices) as written. */
function settlementOf(txId: string): { amount: string | null; products: Array<[number, number]> } {
  const text = bench.proxy.of('Settlement', txId)[0]!.requestText;
  const products = (JSON.parse(text).Products as Array<{ Code: number; Price: number }>).map(
    (p) => [p.Code, p.Price] as [number, number],
  );
  return { amount: member(text, 'BasicInfo', 'Amount'), products };
}

/**
 * A reset of the reader (the VMC's or the board's) leaves it unusable until the VMC has set it up
 * again and the daemon's payment side has heard so; a Start before that is declined (code 30,
 * "machine busy: reader not enabled"). The VMC simulator's own state turns enabled first, so a
 * test that resets waits for the daemon's word after `mark` (taken before the reset).
 */
function readerUsableAgain(mark: number): Promise<unknown> {
  const enabled = (l: { msg?: unknown; status?: unknown }) =>
    l.msg === 'reader availability changed' && l.status === 'enabled';
  return waitLogAfter(bench.rig, mark, enabled, 'the daemon to see the reader enabled again after the reset');
}

// ---- item 1: a reset after the approval is a VEND SUCCESS (MDB 4.2 7.4.7) -------------------

test(
  'static: c,ERR,VEND 5 then INACTIVE after the approval of 1.15 -> charged: Settlement 1.44 with both Products',
  T,
  async () => {
    const { rig } = bench;
    const session = await openSession(rig);
    await buy(rig, 7, 0.29);
    assert.deepEqual(await select(rig, 12, 1.15), { kind: 'vend-approve', amount: 1.15 });
    const mark = logMark(rig);
    rig.vmc.resetReader(); // c,ERR,VEND 5, c,STATUS,INACTIVE, then the VMC sets the reader up again
    const t = await waitTx(rig, session.txId, (x) => x.accepted.Settlement === 1, 'the Settlement');
    assert.equal(t.requests.Cancel, 0);
    assert.deepEqual(settlementOf(session.txId), {
      amount: '1.44',
      products: [
        [7, 0.29],
        [12, 1.15],
      ],
    });
    assert.deepEqual(
      lastSession(rig).vends.map((v) => v.outcome),
      ['success', 'reset'],
    );
    await readerUsableAgain(mark);
  },
);

test(
  'static: the reset seen only as c,STATUS,INACTIVE after the approval of 4.35 -> charged: Settlement 4.35',
  T,
  async () => {
    const { rig } = bench;
    const session = await openSession(rig);
    assert.deepEqual(await select(rig, 13, 4.35), { kind: 'vend-approve', amount: 4.35 });
    const mark = logMark(rig);
    resetSeenAsInactive(rig.vmc);
    await waitTx(rig, session.txId, (x) => x.accepted.Settlement === 1, 'the Settlement');
    assert.deepEqual(settlementOf(session.txId), { amount: '4.35', products: [[13, 4.35]] });
    await readerUsableAgain(mark);
  },
);

test(
  'static: the adapter board restarts (boot banner) after the ' +
    'approval of 1.15 -> charged; the board is configured again',
  T,
  async () => {
    const { rig } = bench;
    const session = await openSession(rig);
    await buy(rig, 7, 0.29);
    assert.deepEqual(await select(rig, 12, 1.15), { kind: 'vend-approve', amount: 1.15 });
    const reconfigured = rig.nextCommand((c) => c.kind === 'version', 10_000, 'V after the board restart');
    const mark = logMark(rig);
    rig.vmc.resetBoard();
    await reconfigured;
    await waitTx(rig, session.txId, (x) => x.accepted.Settlement === 1, 'the Settlement');
    assert.deepEqual(settlementOf(session.txId), {
      amount: '1.44',
      products: [
        [7, 0.29],
        [12, 1.15],
      ],
    });
    await readerUsableAgain(mark);
  },
);

test(
  'static: c,ERR,VEND 3 (dispense failed) after the approval stays uncharged: only the 0.29 vend is settled',
  T,
  async () => {
    const { rig } = bench;
    const session = await openSession(rig);
    await buy(rig, 7, 0.29);
    await buy(rig, 12, 1.15, 'failure');
    assert.ok(rig.vmc.endSession());
    await waitTx(rig, session.txId, (x) => x.accepted.Settlement === 1, 'the Settlement');
    assert.deepEqual(settlementOf(session.txId), { amount: '0.29', products: [[7, 0.29]] });
  },
);

test('dynamic: paid 4.35, then the VMC resets during the dispense (c,ERR,VEND 5) -> vended, no Void', T, async () => {
  const { rig } = bench;
  const pay = await selectAndPay(rig, 21, 4.35);
  assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 4.35 });
  const mark = logMark(rig);
  rig.vmc.resetReader();
  assert.equal(await pay.result, 'vended');
  const t = await waitTx(rig, pay.txId, (x) => x.state === 'paid', 'the paid QR');
  assert.equal(t.requests.Void, 0, 'the sale stands');
  assert.deepEqual(
    lastSession(rig).vends.map((v) => v.outcome),
    ['reset'],
  );
  await readerUsableAgain(mark);
  assert.equal(rig.gateway.ledger().transactions[pay.txId]?.requests.Void, 0, 'still no Void once the reader is back');
});

test('dynamic: paid 1.15, then the reset seen only as c,STATUS,INACTIVE -> vended, no Void', T, async () => {
  const { rig } = bench;
  const pay = await selectAndPay(rig, 12, 1.15);
  assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 1.15 });
  const mark = logMark(rig);
  resetSeenAsInactive(rig.vmc);
  assert.equal(await pay.result, 'vended');
  await readerUsableAgain(mark);
  assert.equal(rig.gateway.ledger().transactions[pay.txId]?.requests.Void, 0);
});

// ---- item 6: the VMC takes the selection elsewhere while a dynamic QR payment is pending -------

test(
  'dynamic: the VMC disables the reader while the QR for 7.77 waits ' +
    '(another device took over) -> no vend, last poll closes the QR, no charge',
  T,
  async () => {
    const { rig, proxy } = bench;
    const heardBefore = rig.vmc.received().length;
    const pay = await selectAndPay(rig, 8, 7.77); // 7.77: never paid
    await until(() => proxy.of('Inquiry', pay.txId).length >= 1, 5000, 'the first Inquiry');
    await setReaderEnabled(rig, false);
    assert.equal(await pay.result, 'cancelled');
    const last = proxy.of('Inquiry', pay.txId).at(-1)!;
    assert.equal(last.request!.Polling.IsLastPolling, true, 'the gateway is told to close the QR');
    const t = rig.gateway.ledger().transactions[pay.txId]!;
    assert.deepEqual([t.requests.Void, t.requests.Settlement], [0, 0]);
    assert.ok(
      !rig.vmc
        .received()
        .slice(heardBefore)
        .some((l) => l.startsWith('C,VEND,') && l !== 'C,VEND,-1'),
      'no approval ever reached the VMC',
    );
    assert.deepEqual(
      lastSession(rig).vends.map((v) => v.outcome),
      ['reset'],
    );
    await setReaderEnabled(rig, true);
  },
);

test(
  'dynamic: paid while the VMC disables the reader (its card reader took over) ' +
    '-> the last poll finds it paid: Void with that PaymentInfo, no vend',
  T,
  async () => {
    const { rig, proxy } = bench;
    rig.gateway.addRules([{ op: 'GenerateQR', amount: 1.15, times: 1, behaviour: { kind: 'pay-after-ms', ms: 500 } }]);
    // The first Inquiry goes unanswered (held until gateway.timeoutMs), so the consumer has paid by the last one.
    proxy.hangWhen((op, body) => op === 'Inquiry' && body?.Polling?.IsLastPolling !== true);
    const pay = await selectAndPay(rig, 12, 1.15);
    await until(() => proxy.of('Inquiry', pay.txId).length >= 1, 5000, 'the first Inquiry');
    await setReaderEnabled(rig, false);
    assert.equal(await pay.result, 'voided');
    const t = await waitTx(rig, pay.txId, (x) => x.accepted.Void === 1, 'the Void');
    assert.deepEqual([t.void?.reasonCode, t.void?.gatewayTimeout], [3, false]);
    const approving = proxy.of('Inquiry', pay.txId).find((e) => e.response?.Status.Verdict === 'Approved')!;
    assert.equal(
      member(proxy.of('Void', pay.txId)[0]!.requestText, 'PaymentInfo'),
      member(approving.responseText, 'PaymentInfo'),
      'byte for byte',
    );
    assert.equal(lastSession(rig).vends[0]?.approved, null, 'the VMC never got an approval');
    await setReaderEnabled(rig, true);
  },
);

test(
  'dynamic: the VMC disables the reader and the last Inquiry goes ' +
    'unanswered (may have been paid) -> Void {IsGatewayTimeout}',
  T,
  async () => {
    const { rig, proxy } = bench;
    proxy.hangWhen((op, body) => op === 'Inquiry' && body?.Polling?.IsLastPolling === true);
    const pay = await selectAndPay(rig, 8, 7.77);
    await until(() => proxy.of('Inquiry', pay.txId).length >= 1, 5000, 'the first Inquiry');
    await setReaderEnabled(rig, false);
    assert.equal(await pay.result, 'voided');
    const t = await waitTx(rig, pay.txId, (x) => x.accepted.Void === 1, 'the Void');
    assert.equal(t.void?.gatewayTimeout, true);
    await setReaderEnabled(rig, true);
  },
);

test(
  'dynamic: the consumer cancels on the VMC while the QR waits -> the payment is abandoned, reason "by consumer"',
  T,
  async () => {
    const { rig, proxy } = bench;
    const pay = await selectAndPay(rig, 9, 7.77);
    await until(() => proxy.of('Inquiry', pay.txId).length >= 1, 5000, 'the first Inquiry');
    assert.ok(rig.vmc.cancel());
    assert.equal(await pay.result, 'cancelled');
    assert.equal(rig.gateway.ledger().transactions[pay.txId]?.requests.Void, 0);
  },
);

// ---- item 7: cash sales and the board's other lines ------------------------------------------

test(
  'cash sales: recorded in the ledger, counted in the stats line, ' +
    "never sent to the gateway; other roles' lines counted by kind",
  T,
  async () => {
    const { rig } = bench;
    const before = Object.keys(rig.gateway.ledger().transactions).length;
    const mark = logMark(rig);
    reportCashSale(rig.vmc, 12, 1.15);
    reportCashSale(rig.vmc, 7, 0.29);
    rig.vmc.spew({ kind: 'ignored', what: 'cashless-master', line: 'd,STATUS,IDLE' }, 2);
    await waitLogAfter(
      rig,
      mark,
      (l) => l.msg === 'cash sale recorded (paid to another device, not charged)' && l.price === 0.29,
      'the second cash sale recorded',
    );
    const stats = await waitLogAfter(
      rig,
      mark,
      (l) =>
        l.msg === 'stats' &&
        (l.stats as any)?.reader?.cashSales >= 2 &&
        (l.stats as any)?.reader?.noise?.ignoredByKind?.['cashless-master'] >= 2,
      'a stats line with both',
    );
    const reader = (stats.stats as any).reader;
    assert.equal(reader.cashSales, 2);
    assert.equal(reader.noise.total, 0, 'recognised lines are not noise');
    const db = new Database(join(rig.dir, 'ledger.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare('SELECT item, price_minor FROM cash_sales ORDER BY id').all();
      assert.deepEqual(rows, [
        { item: 12, price_minor: 115 },
        { item: 7, price_minor: 29 },
      ]);
    } finally {
      db.close();
    }
    assert.equal(Object.keys(rig.gateway.ledger().transactions).length, before, 'nothing went to the gateway');
  },
);
