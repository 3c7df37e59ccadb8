/**
 * End to end, Dynamic QR on a VMC without always-idle (mdb.alwaysIdle false): the reader keeps a
 * session open with mdb.virtualCredit so the consumer can select, and each selection is paid by
 * Dynamic QR. A Static QR Start replaces the virtual session with a funded one, and the virtual
 * session comes back after it.
 */
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertLedgerClean,
  assertSalesBalance,
  createInProcessBench,
  lastSession,
  until,
  waitTx,
  type Bench,
} from './support/e2e-rig.js';
import type { InProcessRig } from '../../rigs/in-process-rig.js';
import { selectAndPay } from './support/dynamic-payment.js';
import { buy, openSession } from './support/static-session.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

let bench: Bench<InProcessRig>;
const T = { timeout: TEST_DEADLINE_MS };
const CREDIT = 20;

/** The virtual-credit session is open on the VMC with nothing pending. */
async function virtualSessionOpen(): Promise<void> {
  await until(
    () => {
      const s = bench.rig.vmc.state();
      const last = lastSession(bench.rig);
      return s.session && s.vend === 'none' && last.funds === CREDIT;
    },
    10_000,
    'the virtual-credit session to be open',
  );
}

before(async () => {
  bench = await createInProcessBench({
    vmc: { vendPolicy: 'manual' },
    config: {
      mdb: { alwaysIdle: false, virtualCredit: CREDIT, maxResponseTimeS: 6 },
      dynamicQr: { paymentTimeoutMs: 1500, pollIntervalMs: 100 },
    },
  });
  await virtualSessionOpen();
});
after(async () => bench?.close());
afterEach(async () => {
  assertLedgerClean(bench.rig);
  assertSalesBalance(bench.rig, { virtualCredit: CREDIT });
  await virtualSessionOpen();
});

test('the board is told always-idle is off, and the reader opens a session with the virtual credit', T, async () => {
  const { rig } = bench;
  assert.equal(rig.vmc.state().config['mdb-always-idle'], '0');
  const first = rig.vmc.records()[0]!;
  assert.equal(first.kind, 'funded');
  assert.equal(first.funds, CREDIT);
  assert.deepEqual(rig.gateway.ledger().summary.transactions, 0, 'a virtual session involves no payment');
});

test(
  'a selection in the virtual session is paid by Dynamic QR and vended; the session stays for the next',
  T,
  async () => {
    const { rig } = bench;
    const sessionId = lastSession(rig).id;
    const pay = await selectAndPay(rig, 3, 1.2);
    assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 1.2 });
    assert.ok(rig.vmc.vendSuccess());
    assert.equal(await pay.result, 'vended');
    const t = await waitTx(rig, pay.txId, (x) => x.state === 'paid', 'the paid QR');
    assert.deepEqual(t.requests, { Authorization: 0, Settlement: 0, Cancel: 0, GenerateQR: 1, Inquiry: 1, Void: 0 });
    assert.equal(lastSession(rig).id, sessionId, 'the same virtual session is still open');

    const second = await selectAndPay(rig, 4, 2.5);
    assert.deepEqual(await second.answer, { kind: 'vend-approve', amount: 2.5 });
    assert.ok(rig.vmc.vendFailure(3));
    assert.equal(await second.result, 'voided');
    const v = await waitTx(rig, second.txId, (x) => x.accepted.Void === 1, 'the Void of the failed vend');
    assert.equal(v.void?.reasonCode, 3);
    assert.deepEqual(
      lastSession(rig).vends.map((x) => x.outcome),
      ['success', 'failed'],
    );
  },
);

test(
  'a Static QR Start replaces the virtual session with the authorized funds; the virtual one returns after',
  T,
  async () => {
    const { rig } = bench;
    const stop = rig.nextCommand((c) => c.kind === 'stop', 10_000, 'C,STOP of the virtual session');
    const session = await openSession(rig);
    await stop;
    assert.equal(session.funds, 10);
    await buy(rig, 12, 1.5);
    const virtualAgain = rig.nextCommand(
      (c) => c.kind === 'start' && c.funds === CREDIT,
      10_000,
      'the virtual session to reopen',
    );
    assert.ok(rig.vmc.endSession());
    const t = await waitTx(rig, session.txId, (x) => x.state === 'settled', 'the Settlement');
    assert.equal(t.settlement?.amount, 1.5);
    await virtualAgain;
  },
);
