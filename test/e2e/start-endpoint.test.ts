/**
 * End to end, the Static QR Start endpoint of the real daemon, as a wallet backend reaches it over
 * loopback HTTP: a Start for another machine (50), a replayed TransactionId (996, also after a
 * restart), a wrong token or integrator (9, the same answer), a busy machine (30), a disabled
 * reader (30). Each refused Start starts nothing: no Authorization, no MDB session.
 */
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sendStart, type StartResult } from '../../src/sim/wallet/index.js';
import {
  assertLedgerClean,
  assertSalesBalance,
  createBench,
  setReaderEnabled,
  vmcIdle,
  waitTx,
  type Bench,
} from './support/e2e-rig.js';
import { openSession } from './support/static-session.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

let bench: Bench;
const T = { timeout: TEST_DEADLINE_MS };

before(async () => {
  bench = await createBench({ vmc: { vendPolicy: 'manual' } });
});
after(async () => bench?.close());
afterEach(async () => {
  assertLedgerClean(bench.rig);
  assertSalesBalance(bench.rig);
  await vmcIdle(bench.rig);
});

function declinedWith(result: StartResult, code: number): void {
  assert.equal(result.outcome.kind, 'declined', JSON.stringify(result.outcome));
  if (result.outcome.kind !== 'declined') return;
  assert.equal(result.outcome.code, code);
  assert.equal(result.outcome.response.TransactionId, result.transactionId);
}

/** A refused Start started nothing: the gateway never heard of it and the VMC saw no session. */
function nothingStarted(result: StartResult, sessionsBefore: number): void {
  assert.equal(bench.rig.gateway.ledger().transactions[result.transactionId], undefined);
  assert.deepEqual(bench.proxy.of('Authorization', result.transactionId), []);
  assert.equal(bench.rig.vmc.records().length, sessionsBefore);
}

async function endEmptySession(txId: string): Promise<void> {
  assert.ok(bench.rig.vmc.endSession());
  await waitTx(bench.rig, txId, (x) => x.state === 'cancelled', 'the Cancel of the empty session');
}

test(
  'a Start naming another machine (TerminalId or UniQR) is declined 50; one naming this UniQR opens a session',
  T,
  async () => {
    const { rig } = bench;
    const before = rig.vmc.records().length;
    for (const other of [{ terminalId: 'SOMEBODY-ELSE' }, { uniQr: 'SOMEBODY-ELSE' }]) {
      const result = await rig.start(other);
      declinedWith(result, 50);
      nothingStarted(result, before);
    }
    const opened = rig.nextCommand((c) => c.kind === 'start', 10_000, 'C,START');
    const ok = await rig.start({ uniQr: rig.uniQr });
    assert.equal(ok.outcome.kind, 'approved');
    await opened;
    await endEmptySession(ok.transactionId);
  },
);

test(
  'a replayed TransactionId is declined 996, also after the daemon restarted, also while the machine is busy',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const { rig } = bench;
    const session = await openSession(rig);
    await endEmptySession(session.txId);
    const before = rig.vmc.records().length;
    declinedWith(await rig.start({ transactionId: session.txId }), 996);
    assert.equal(rig.vmc.records().length, before);

    // The ledger remembers it across a restart: the endpoint's memory is gone, and the answer must
    // come from the TransactionId check itself (its reason in the log), not from the payment side's
    // unique insert further on, which would answer 996 too.
    await rig.stopAgent('SIGTERM');
    const agent = await rig.startAgent();
    declinedWith(await rig.start({ transactionId: session.txId }), 996);
    const answered = await agent.waitForLog(
      (l) => l.msg === 'Start declined' && l.txId === session.txId,
      5000,
      'the log of the replay',
    );
    assert.equal(
      answered.reason,
      'replayed TransactionId',
      'declined by the TransactionId check, before the payment side',
    );
    assert.equal(rig.vmc.records().length, before);

    // While another session runs, the replay still gets 996 (the TransactionId is checked before
    // busy, docs/decisions/sales-and-recovery.md), not 30: only the ledger can know it after the restart.
    const running = await openSession(rig);
    const replay = await rig.start({ transactionId: session.txId });
    declinedWith(replay, 996);
    assert.equal(rig.vmc.state().session, true, 'the running session is not disturbed');
    await endEmptySession(running.txId);
    assert.equal(rig.gateway.ledger().transactions[session.txId]!.requests.Authorization, 1, 'authorized once only');
  },
);

test('a wrong SecretToken and a wrong integratorName get the same answer: Declined 9, nothing started', T, async () => {
  const { rig } = bench;
  const before = rig.vmc.records().length;
  const url = rig.agent!.startOrigin!;
  const base = { url, terminalId: rig.terminalId, timeoutMs: 5000 };
  const wrongToken = await sendStart({
    ...base,
    integratorName: rig.integratorName,
    secretToken: randomBytes(32).toString('hex'),
  });
  const shortToken = await sendStart({ ...base, integratorName: rig.integratorName, secretToken: 'short' });
  const wrongName = await sendStart({ ...base, integratorName: 'another-wallet', secretToken: rig.secretToken });
  for (const result of [wrongToken, shortToken, wrongName]) {
    declinedWith(result, 9);
    nothingStarted(result, before);
  }
  const statusOf = (r: StartResult) => (r.outcome.kind === 'declined' ? r.outcome.response.Status : null);
  assert.deepEqual(statusOf(wrongToken), statusOf(wrongName));
  assert.deepEqual(statusOf(shortToken), statusOf(wrongName));
  // The secret never shows up in what the daemon logged.
  assert.ok(
    !rig.agent!.logs.some((l) => JSON.stringify(l).includes(rig.secretToken)),
    'the SecretToken leaked into the logs',
  );
});

test('a Start while a session runs is declined 30 (busy); the running session is not disturbed', T, async () => {
  const { rig } = bench;
  const session = await openSession(rig);
  const busy = await rig.start();
  declinedWith(busy, 30);
  assert.match(busy.outcome.kind === 'declined' ? (busy.outcome.message ?? '') : '', /busy/);
  assert.equal(rig.gateway.ledger().transactions[busy.transactionId], undefined);
  assert.equal(rig.vmc.state().session, true, 'the first session is still open');
  await endEmptySession(session.txId);
  assert.equal(rig.gateway.ledger().transactions[session.txId]!.accepted.Cancel, 1);
});

test('a Start while the VMC has the reader disabled is declined 30; accepted again once enabled', T, async () => {
  const { rig } = bench;
  await setReaderEnabled(rig, false);
  const before = rig.vmc.records().length;
  const refused = await rig.start();
  declinedWith(refused, 30);
  nothingStarted(refused, before);
  await setReaderEnabled(rig, true);
  const session = await openSession(rig);
  await endEmptySession(session.txId);
});

test('the consumer-data object is echoed in the Start response', T, async () => {
  const { rig } = bench;
  const opened = rig.nextCommand((c) => c.kind === 'start', 10_000, 'C,START');
  const consumerData = { loyalty: { tier: 'gold' }, note: 'échoed' };
  const result = await sendStart({
    url: rig.agent!.startOrigin!,
    integratorName: rig.integratorName,
    secretToken: rig.secretToken,
    terminalId: rig.terminalId,
    consumerData,
    timeoutMs: 5000,
  });
  assert.equal(result.outcome.kind, 'approved');
  assert.deepEqual(result.outcome.kind === 'approved' && result.outcome.response.ConsumerData, consumerData);
  await opened;
  await endEmptySession(result.transactionId);
});
