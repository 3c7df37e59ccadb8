/**
 * End to end, Dynamic QR on an always-idle VMC: the real daemon wiring in this process on the
 * in-memory wire (rigs/in-process-rig.ts), the gateway simulator behind a recording proxy. The
 * amount table of the simulator picks the consumer's behaviour (docs/payments.md, the gateway
 * simulator): 7.0N paid after N polls, 7.77 never paid, 8.CC declined at Inquiry, 9.CC GenerateQR
 * declined.
 *
 * dynamicQr.paymentTimeoutMs 1500 with mdb.maxResponseTimeS 6: the payment side must answer the
 * VMC itself (result "expired"/"voided"), long before the reader's own backstop would deny.
 */
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertLedgerClean,
  assertSalesBalance,
  createInProcessBench,
  lastSession,
  until,
  vmcIdle,
  waitTx,
  type Bench,
} from './support/e2e-rig.js';
import { selectAndPay } from './support/dynamic-payment.js';
import type { InProcessRig } from '../../rigs/in-process-rig.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

let bench: Bench<InProcessRig>;
const T = { timeout: TEST_DEADLINE_MS };

before(async () => {
  bench = await createInProcessBench({
    vmc: { vendPolicy: 'manual' },
    config: {
      gateway: { timeoutMs: 1000 },
      mdb: { alwaysIdle: true, maxResponseTimeS: 6 },
      dynamicQr: { paymentTimeoutMs: 1500, pollIntervalMs: 100 },
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

const polling = (e: { request: Record<string, any> | null }) =>
  e.request!.Polling as { IsLastPolling: boolean; PollingAttemptCounter: number };

test('paid at the first Inquiry and vended: no closing operation, the sale stands', T, async () => {
  const { rig, proxy } = bench;
  const pay = await selectAndPay(rig, 3, 1.2);
  assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 1.2 });
  assert.ok(rig.vmc.vendSuccess());
  assert.equal(await pay.result, 'vended');

  const t = await waitTx(rig, pay.txId, (x) => x.state === 'paid', 'the paid QR');
  assert.deepEqual(t.requests, { Authorization: 0, Settlement: 0, Cancel: 0, GenerateQR: 1, Inquiry: 1, Void: 0 });
  assert.equal(t.qr?.amount, 1.2);
  const gen = proxy.of('GenerateQR', pay.txId)[0]!;
  assert.equal(gen.request!.BasicInfo.Amount, 1.2);
  assert.deepEqual(gen.request!.Product, [
    { Code: 3, Price: 1.2, Name: 'Item 3', Measurement: 1, UnitOfMeasurement: 'Unit' },
  ]);
  const inq = proxy.of('Inquiry', pay.txId)[0]!;
  // Before any approval the Inquiry names the QR GenerateQR issued.
  assert.deepEqual(inq.request!.PaymentInfo, {
    SrvTranId: gen.response!.QRData.SrvTranId,
    RRN: gen.response!.QRData.RRN,
    AuthAmount: 1.2,
  });
  assert.deepEqual(polling(inq), { IsLastPolling: false, PollingAttemptCounter: 1 });
  assert.deepEqual(lastSession(rig), { ...lastSession(rig), kind: 'always-idle', end: 'complete' });
  assert.deepEqual(
    lastSession(rig).vends.map((v) => v.outcome),
    ['success'],
  );
});

test('paid after 3 pending polls (7.03): PollingAttemptCounter 1..4, then vended', T, async () => {
  const { rig, proxy } = bench;
  const pay = await selectAndPay(rig, 4, 7.03);
  assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 7.03 });
  assert.ok(rig.vmc.vendSuccess());
  assert.equal(await pay.result, 'vended');

  const t = await waitTx(rig, pay.txId, (x) => x.state === 'paid', 'the paid QR');
  assert.equal(t.qr?.polls, 4, 'the simulator answered four Inquiries');
  const inquiries = proxy.of('Inquiry', pay.txId);
  assert.deepEqual(
    inquiries.map((e) => polling(e)),
    [1, 2, 3, 4].map((n) => ({ IsLastPolling: false, PollingAttemptCounter: n })),
  );
  assert.deepEqual(
    inquiries.map((e) => e.response!.Status.Code ?? 'approved'),
    [993, 993, 993, 'approved'],
  );
});

test('declined at Inquiry (8.01 -> code 1): the vend is denied, nothing to void', T, async () => {
  const { rig } = bench;
  const pay = await selectAndPay(rig, 5, 8.01);
  assert.deepEqual(await pay.answer, { kind: 'vend-deny' });
  assert.equal(await pay.result, 'declined');
  const t = await waitTx(rig, pay.txId, (x) => x.state === 'qr-declined', 'the declined QR');
  assert.equal(t.authorization?.code, 1);
  assert.deepEqual(t.requests, { Authorization: 0, Settlement: 0, Cancel: 0, GenerateQR: 1, Inquiry: 1, Void: 0 });
  assert.deepEqual(
    lastSession(rig).vends.map((v) => v.outcome),
    ['denied'],
  );
});

test('never paid (7.77): the last poll is flagged IsLastPolling, the daemon denies the vend itself', T, async () => {
  const { rig, proxy } = bench;
  // The board was told the VMC's maximum response time (mdb.maxResponseTimeS).
  assert.equal(rig.vmc.state().config['mdb-timeout-vend'], '6');
  const pay = await selectAndPay(rig, 6, 7.77);
  assert.deepEqual(await pay.answer, { kind: 'vend-deny' });
  // "expired" is the payment side's own decision at its deadline; the reader's backstop (at the
  // VMC's maximum response time) would have ended the request instead and the result would be "cancelled".
  assert.equal(await pay.result, 'expired');
  const t = await waitTx(rig, pay.txId, (x) => x.state === 'expired', 'the expired QR');
  assert.equal(t.requests.Void, 0, 'nothing was paid: no Void');
  const inquiries = proxy.of('Inquiry', pay.txId);
  assert.ok(inquiries.length >= 2, `several polls (${inquiries.length})`);
  assert.equal(t.qr?.polls, inquiries.length);
  assert.deepEqual(
    inquiries.map((e) => polling(e).PollingAttemptCounter),
    inquiries.map((_, i) => i + 1),
  );
  assert.deepEqual(
    inquiries.map((e) => polling(e).IsLastPolling),
    inquiries.map((_, i) => i === inquiries.length - 1),
  );
  assert.equal(inquiries.at(-1)!.response!.Status.Code, 992);
  assert.ok(inquiries.slice(0, -1).every((e) => e.response!.Status.Code === 993));
  assert.deepEqual(
    lastSession(rig).vends.map((v) => v.outcome),
    ['denied'],
  );
});

test('GenerateQR declined (9.05 -> code 5): the vend is denied, no Inquiry', T, async () => {
  const { rig, proxy } = bench;
  const pay = await selectAndPay(rig, 7, 9.05);
  assert.deepEqual(await pay.answer, { kind: 'vend-deny' });
  assert.equal(await pay.result, 'not-issued');
  const t = await waitTx(rig, pay.txId, (x) => x.state === 'qr-declined', 'the declined GenerateQR');
  assert.deepEqual(t.requests, { Authorization: 0, Settlement: 0, Cancel: 0, GenerateQR: 1, Inquiry: 0, Void: 0 });
  assert.equal(proxy.of('GenerateQR', pay.txId)[0]!.response!.Status.Code, 5);
});

test(
  'vend failure after payment: Void (ReasonCode 3) with the approving Inquiry PaymentInfo unchanged',
  T,
  async () => {
    const { rig, proxy } = bench;
    const pay = await selectAndPay(rig, 8, 2.5);
    assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 2.5 });
    assert.ok(rig.vmc.vendFailure(3));
    assert.equal(await pay.result, 'voided');
    const t = await waitTx(rig, pay.txId, (x) => x.accepted.Void === 1, 'the Void');
    assert.equal(t.state, 'voided');
    assert.equal(t.void?.reasonCode, 3);
    assert.equal(t.void?.gatewayTimeout, false);
    const approving = proxy.of('Inquiry', pay.txId).find((e) => e.response?.Status.Verdict === 'Approved')!;
    const voids = proxy.of('Void', pay.txId);
    assert.equal(voids.length, 1);
    assert.deepEqual(voids[0]!.request!.PaymentInfo, approving.response!.PaymentInfo);
    assert.equal(voids[0]!.request!.BasicInfo.Amount, 2.5);
    assert.deepEqual(
      lastSession(rig).vends.map((v) => v.outcome),
      ['failed'],
    );
  },
);

test(
  'the VMC resets during the dispense after payment: a VEND SUCCESS by MDB 4.2 7.4.7, the sale stands (no Void)',
  T,
  async () => {
    const { rig } = bench;
    const pay = await selectAndPay(rig, 9, 1.1);
    assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 1.1 });
    rig.vmc.resetReader();
    assert.equal(await pay.result, 'vended');
    const t = await waitTx(rig, pay.txId, (x) => x.state === 'paid', 'the paid QR');
    assert.equal(t.requests.Void, 0);
    assert.deepEqual(
      lastSession(rig).vends.map((v) => v.outcome),
      ['reset'],
    );
    await until(() => rig.vmc.state().reader === 'enabled', 5000, 'the VMC to set the reader up again');
  },
);

test(
  'consumer cancel while waiting for payment (Starts refused meanwhile): ' +
    'one more poll flagged IsLastPolling closes the QR, no Void',
  T,
  async () => {
    const { rig, proxy } = bench;
    const pay = await selectAndPay(rig, 10, 7.77);
    await until(() => proxy.of('Inquiry', pay.txId).length >= 1, 5000, 'the first Inquiry');
    // Meanwhile the machine is busy: a wallet's Start is refused and starts nothing.
    const start = await rig.start();
    assert.equal(start.outcome.kind === 'declined' && start.outcome.code, 30);
    assert.equal(rig.gateway.ledger().transactions[start.transactionId], undefined);
    assert.ok(rig.vmc.cancel());
    assert.equal(await pay.result, 'cancelled');
    const t = await waitTx(rig, pay.txId, (x) => x.state === 'expired', 'the QR closed at the gateway');
    assert.equal(t.requests.Void, 0);
    const inquiries = proxy.of('Inquiry', pay.txId);
    assert.equal(polling(inquiries.at(-1)!).IsLastPolling, true);
    assert.ok(inquiries.slice(0, -1).every((e) => polling(e).IsLastPolling === false));
    assert.deepEqual(
      lastSession(rig).vends.map((v) => v.outcome),
      ['cancelled'],
    );
  },
);

test(
  'the last Inquiry unanswered: outcome unknown -> Void with PaymentInfo {"IsGatewayTimeout":true}, vend denied',
  T,
  async () => {
    const { rig, proxy } = bench;
    proxy.hangWhen((op, body) => op === 'Inquiry' && body?.Polling?.IsLastPolling === true);
    const pay = await selectAndPay(rig, 11, 7.77);
    assert.deepEqual(await pay.answer, { kind: 'vend-deny' });
    assert.equal(await pay.result, 'voided');
    const t = await waitTx(rig, pay.txId, (x) => x.accepted.Void === 1, 'the Void');
    assert.equal(t.void?.gatewayTimeout, true);
    assert.equal(t.void?.reasonCode, 3);
    const last = proxy.of('Inquiry', pay.txId).at(-1)!;
    assert.equal(last.fate, 'held');
    assert.equal(polling(last).IsLastPolling, true);
    const voids = proxy.of('Void', pay.txId);
    assert.equal(voids.length, 1);
    assert.deepEqual(voids[0]!.request!.PaymentInfo, { IsGatewayTimeout: true });
    assert.deepEqual(
      lastSession(rig).vends.map((v) => v.outcome),
      ['denied'],
    );
  },
);
