/**
 * End to end, Static QR when the gateway says no or does not answer: a declined Authorization
 * (nothing owed, no session), an Authorization that hangs or whose answer is lost (a Cancel with
 * PaymentInfo {"IsGatewayTimeout": true} releases it), and a Settlement or Cancel delivered
 * through 5xx, resets and garbage answers by the outbox: retried with the same bytes, accepted
 * exactly once.
 */
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { checkSales } from '../../src/sim/checker.js';
import {
  assertLedgerClean,
  assertSalesBalance,
  createInProcessBench,
  logMark,
  tx,
  until,
  vmcIdle,
  waitLogAfter,
  waitTx,
  type Bench,
} from './support/e2e-rig.js';
import type { InProcessRig } from '../../rigs/in-process-rig.js';
import { buy, openSession } from './support/static-session.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

let bench: Bench<InProcessRig>;
const T = { timeout: TEST_DEADLINE_MS };

before(async () => {
  bench = await createInProcessBench({ vmc: { vendPolicy: 'manual' }, config: { gateway: { timeoutMs: 1000 } } });
});
after(async () => bench?.close());
/** A Settlement the gateway refused for good: the one sale the checker must report as not settled. */
let refusedSale: string | null = null;

afterEach(async () => {
  bench.rig.gateway.setFaults([]);
  assertLedgerClean(bench.rig);
  if (refusedSale === null) assertSalesBalance(bench.rig);
  await vmcIdle(bench.rig);
});

const NO_CALLS = { Authorization: 0, Settlement: 0, Cancel: 0, GenerateQR: 0, Inquiry: 0, Void: 0 };

test(
  'Authorization declined (Balance 9.01 -> code 1): nothing owed, no session, nothing sent after it',
  T,
  async () => {
    const { rig, proxy } = bench;
    const sessionsBefore = rig.vmc.records().length;
    const mark = logMark(rig);
    const start = await rig.start({ balance: 9.01 });
    assert.equal(start.outcome.kind, 'approved', 'the Start itself is accepted; the gateway decides');
    const line = await waitLogAfter(
      rig,
      mark,
      (l) => l.msg === 'static QR authorization declined' && l.txId === start.transactionId,
      'the decline',
    );
    assert.equal(line.code, 1);
    const t = tx(rig, start.transactionId)!;
    assert.equal(t.state, 'auth-declined');
    assert.equal(t.authorization?.code, 1);
    assert.equal(t.authorization?.amount, 9.01);
    assert.deepEqual(t.requests, { ...NO_CALLS, Authorization: 1 });
    assert.equal(rig.vmc.records().length, sessionsBefore, 'no MDB session was opened');

    // The machine is free again at once; a good Start afterwards works and nothing more was sent
    // for the declined one (no Cancel: there is nothing to release).
    const next = await openSession(rig);
    assert.ok(rig.vmc.endSession());
    await waitTx(rig, next.txId, (x) => x.state === 'cancelled', 'the next session to close');
    assert.deepEqual(proxy.of('Cancel', start.transactionId), []);
    assert.deepEqual(proxy.of('Settlement', start.transactionId), []);
  },
);

test('Authorization unanswered (hang): Cancel with PaymentInfo {"IsGatewayTimeout":true}, no session', T, async () => {
  const { rig, proxy } = bench;
  rig.gateway.setFaults([{ kind: 'hang', rate: 1, ops: ['Authorization'], times: 1 }]);
  const sessionsBefore = rig.vmc.records().length;
  const start = await rig.start();
  assert.equal(start.outcome.kind, 'approved');
  const t = await waitTx(rig, start.transactionId, (x) => x.accepted.Cancel === 1, 'the Cancel after the timeout');
  assert.equal(t.state, 'cancelled');
  assert.equal(t.cancel?.gatewayTimeout, true);
  assert.equal(t.cancel?.reasonCode, 3);
  assert.equal(t.authorization, null, 'the hung Authorization was never processed');

  const [auth] = proxy.of('Authorization', start.transactionId);
  assert.equal(auth?.fate, 'aborted', 'the daemon gave up on the Authorization');
  const cancels = proxy.of('Cancel', start.transactionId);
  assert.equal(cancels.length, 1);
  assert.deepEqual(cancels[0]!.request!.PaymentInfo, { IsGatewayTimeout: true });
  assert.equal(cancels[0]!.request!.BasicInfo.Amount, 10);
  assert.equal(rig.vmc.records().length, sessionsBefore, 'no MDB session was opened');
});

test(
  'Authorization processed but its answer lost (reset-after): the Cancel releases the authorization',
  T,
  async () => {
    const { rig, proxy } = bench;
    rig.gateway.setFaults([{ kind: 'reset-after', rate: 1, ops: ['Authorization'], times: 1 }]);
    const start = await rig.start();
    assert.equal(start.outcome.kind, 'approved');
    const t = await waitTx(rig, start.transactionId, (x) => x.accepted.Cancel === 1, 'the Cancel');
    assert.equal(t.authorization?.verdict, 'Approved', 'the gateway had authorized');
    assert.equal(t.state, 'cancelled');
    assert.equal(t.cancel?.gatewayTimeout, true);
    assert.equal(proxy.of('Authorization', start.transactionId)[0]?.fate, 'reset');
    assert.deepEqual(proxy.of('Cancel', start.transactionId)[0]!.request!.PaymentInfo, { IsGatewayTimeout: true });
  },
);

test(
  'Settlement through HTTP 500 twice and a reset after processing: delivered once, every retry the same bytes',
  T,
  async () => {
    const { rig, proxy } = bench;
    const session = await openSession(rig);
    rig.gateway.setFaults([
      { kind: 'http500', rate: 1, ops: ['Settlement'], times: 2 },
      { kind: 'reset-after', rate: 1, ops: ['Settlement'], times: 1 },
    ]);
    // Prices just below their decimal value in binary (1.15 * 100 = 114.99999999999999).
    await buy(rig, 12, 1.15);
    await buy(rig, 7, 4.35);
    assert.ok(rig.vmc.endSession());
    const t = await waitTx(rig, session.txId, (x) => x.duplicates.Settlement === 1, 'the retry after the lost answer');
    assert.equal(t.state, 'settled');
    assert.equal(t.accepted.Settlement, 1);
    assert.equal(t.settlement?.amount, 5.5);

    // The gateway counts the duplicate before its answer has passed back through the proxy.
    await until(
      () => proxy.of('Settlement', session.txId).every((e) => e.fate !== 'pending'),
      5000,
      'the last answer through the proxy',
    );
    const sent = proxy.of('Settlement', session.txId);
    assert.deepEqual(
      sent.map((e) => [e.fate, e.status]),
      [
        ['answered', 500],
        ['answered', 500],
        ['reset', null],
        ['answered', 200],
      ],
    );
    assert.equal(new Set(sent.map((e) => e.requestText)).size, 1, 'every retry carries exactly the first body');
  },
);

test(
  'Cancel through a non-JSON answer, a reset before processing and a bad-schema answer: accepted once',
  T,
  async () => {
    const { rig, proxy } = bench;
    const session = await openSession(rig);
    rig.gateway.setFaults([
      { kind: 'not-json', rate: 1, ops: ['Cancel'], times: 1 },
      { kind: 'reset-before', rate: 1, ops: ['Cancel'], times: 1 },
      { kind: 'bad-schema', rate: 1, ops: ['Cancel'], times: 1 },
    ]);
    assert.ok(rig.vmc.endSession());
    const t = await waitTx(rig, session.txId, (x) => x.duplicates.Cancel === 2, 'the Cancel retries');
    assert.equal(t.state, 'cancelled');
    assert.equal(t.accepted.Cancel, 1);
    const sent = proxy.of('Cancel', session.txId);
    assert.equal(sent.length, 4);
    assert.equal(new Set(sent.map((e) => e.requestText)).size, 1);
    assert.deepEqual(sent[0]!.request!.PaymentInfo, proxy.of('Authorization', session.txId)[0]!.response!.PaymentInfo);
  },
);

// Runs last: after it the ledger holds a sale that is (rightly) not settled.
test(
  'a Settlement declined for good (8.01 -> code 1) is not retried: dead-lettered with an alarm for a person',
  T,
  async () => {
    const { rig, proxy } = bench;
    const session = await openSession(rig);
    const mark = logMark(rig);
    await buy(rig, 12, 8.01);
    assert.ok(rig.vmc.endSession());
    const alarm = await waitLogAfter(
      rig,
      mark,
      (l) => l.code === 'OUTBOX_DEAD_LETTER' && l.txId === session.txId,
      'the dead-letter alarm',
    );
    assert.equal(alarm.op, 'Settlement');
    assert.equal(alarm.declineCode, 1);
    refusedSale = session.txId;
    const t = tx(rig, session.txId)!;
    assert.equal(t.settlement?.verdict, 'Declined');
    assert.equal(t.settlement?.code, 1);
    assert.equal(proxy.of('Settlement', session.txId).length, 1, 'a final decline is not retried');
    assert.deepEqual(proxy.of('Cancel', session.txId), [], "no Cancel behind the gateway's back: a person reconciles");
    const check = checkSales(rig.vmc.records(), rig.gateway.ledger());
    assert.deepEqual(check.unresolved, [session.txId]);
    assert.equal(check.lostMinor, 801);
    assert.deepEqual(check.chargedTwice, []);
  },
);
