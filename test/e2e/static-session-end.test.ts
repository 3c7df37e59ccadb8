/**
 * End to end, how a Static QR session ends other than "session complete": the consumer cancels on
 * the machine, nobody selects before mdb.sessionIdleTimeoutMs (its shortest allowed value, 5 s),
 * the VMC disables or resets the reader mid-session. Each ends with exactly one Settlement (when
 * something was dispensed) or one Cancel with the right ReasonCode.
 */
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertLedgerClean,
  assertSalesBalance,
  createInProcessBench,
  lastSession,
  logMark,
  setReaderEnabled,
  vmcIdle,
  waitLogAfter,
  waitTx,
  type Bench,
} from './support/e2e-rig.js';
import type { InProcessRig } from '../../rigs/in-process-rig.js';
import { buy, openSession, select } from './support/static-session.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

let bench: Bench<InProcessRig>;
const T = { timeout: TEST_DEADLINE_MS };

before(async () => {
  bench = await createInProcessBench({
    vmc: { vendPolicy: 'manual' },
    config: { mdb: { sessionIdleTimeoutMs: 5000 } },
  });
});
after(async () => bench?.close());
afterEach(async () => {
  assertLedgerClean(bench.rig);
  assertSalesBalance(bench.rig);
  await vmcIdle(bench.rig);
});

test(
  'consumer cancel on the machine, nothing bought: Cancel with ReasonCode 2 (cancelled by consumer)',
  T,
  async () => {
    const { rig, proxy } = bench;
    const session = await openSession(rig);
    assert.ok(rig.vmc.cancel());
    const t = await waitTx(rig, session.txId, (x) => x.state === 'cancelled', 'the Cancel');
    assert.equal(t.cancel?.verdict, 'Approved');
    assert.equal(t.cancel?.reasonCode, 2);
    assert.deepEqual(t.requests, { Authorization: 1, Settlement: 0, Cancel: 1, GenerateQR: 0, Inquiry: 0, Void: 0 });
    assert.deepEqual(
      proxy.of('Cancel', session.txId)[0]!.request!.PaymentInfo,
      proxy.of('Authorization', session.txId)[0]!.response!.PaymentInfo,
    );
    assert.equal(lastSession(rig).end, 'consumer-cancel');
  },
);

test('consumer cancel after a purchase: the purchase is settled', T, async () => {
  const { rig } = bench;
  const session = await openSession(rig);
  await buy(rig, 12, 1.5);
  assert.ok(rig.vmc.cancel());
  const t = await waitTx(rig, session.txId, (x) => x.state === 'settled', 'the Settlement');
  assert.equal(t.settlement?.amount, 1.5);
  assert.equal(t.requests.Cancel, 0);
});

test('session idle timeout: the reader stops the session (C,STOP) and cancels with ReasonCode 3', T, async () => {
  const { rig } = bench;
  const stop = rig.nextCommand((c) => c.kind === 'stop', 15_000, 'C,STOP after mdb.sessionIdleTimeoutMs');
  const session = await openSession(rig);
  await stop;
  const t = await waitTx(rig, session.txId, (x) => x.state === 'cancelled', 'the Cancel');
  assert.equal(t.cancel?.reasonCode, 3);
  assert.equal(lastSession(rig).end, 'reader-stop');
  assert.deepEqual(lastSession(rig).vends, []);
});

test(
  'the VMC disables the reader after a vend: Settlement; Starts are refused until it enables it again',
  T,
  async () => {
    const { rig } = bench;
    const session = await openSession(rig);
    await buy(rig, 12, 1.5);
    await setReaderEnabled(rig, false);
    const t = await waitTx(rig, session.txId, (x) => x.state === 'settled', 'the Settlement');
    assert.equal(t.settlement?.amount, 1.5);
    assert.equal(lastSession(rig).end, 'disabled');

    const refused = await rig.start();
    assert.equal(refused.outcome.kind, 'declined');
    assert.equal(refused.outcome.kind === 'declined' && refused.outcome.code, 30);
    assert.equal(rig.gateway.ledger().transactions[refused.transactionId], undefined, 'nothing was authorized');

    await setReaderEnabled(rig, true);
  },
);

test('the VMC disables the reader while an approved vend is dispensing: not charged, Cancel', T, async () => {
  const { rig } = bench;
  const session = await openSession(rig);
  assert.deepEqual(await select(rig, 12, 1.5), { kind: 'vend-approve', amount: 1.5 });
  await setReaderEnabled(rig, false);
  const t = await waitTx(rig, session.txId, (x) => x.state === 'cancelled', 'the Cancel');
  assert.equal(t.cancel?.reasonCode, 3);
  // A disable is no reset (MDB 4.2 7.4.7 speaks of a reset only): the VMC records the vend as failed.
  assert.deepEqual(
    lastSession(rig).vends.map((v) => v.outcome),
    ['failed'],
  );
  await setReaderEnabled(rig, true);
});

test('the VMC resets the reader mid-session: the sold vend is settled, the reader comes back', T, async () => {
  const { rig } = bench;
  const session = await openSession(rig);
  await buy(rig, 12, 1.5);
  const mark = logMark(rig);
  rig.vmc.resetReader();
  const t = await waitTx(rig, session.txId, (x) => x.state === 'settled', 'the Settlement');
  assert.equal(t.settlement?.amount, 1.5);
  assert.equal(lastSession(rig).end, 'vmc-reset');
  // INACTIVE, then the VMC's setup enables it again: the daemon takes Starts once more.
  await waitLogAfter(
    rig,
    mark,
    (l) => l.msg === 'reader availability changed' && l.status === 'inactive',
    'the reader seen inactive',
  );
  await waitLogAfter(
    rig,
    mark,
    (l) => l.msg === 'reader availability changed' && l.status === 'enabled',
    'the reader seen enabled again',
  );
  const again = await openSession(rig);
  assert.ok(rig.vmc.endSession());
  await waitTx(rig, again.txId, (x) => x.state === 'cancelled', 'the Cancel of the empty session');
});
