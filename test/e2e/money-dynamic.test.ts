/**
 * End to end, money and conformance in Dynamic QR (docs/decisions/money-conformance.md): the real
 * daemon wiring in this process on the in-memory wire (rigs/in-process-rig.ts), the gateway
 * simulator behind the recording proxy, the exact bytes the gateway received.
 * - an Inquiry approved for less than the price (0.50 for 1.50) denies the vend and voids the
 *   payment (ReasonCode 3) with the approving PaymentInfo byte for byte;
 * - approved for more than the price: the vend goes ahead and what was paid is recorded;
 * - amounts with decimals in GenerateQR, Inquiry (the composed PaymentInfo) and Void;
 * - the Void repeats the GenerateQR's MachineAuTime and AgeLimitation.
 */
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { memberText } from '../../src/gateway/wire/index.js';
import {
  assertLedgerClean,
  assertSalesBalance,
  createInProcessBench,
  lastSession,
  logMark,
  pastSecondOf,
  vmcIdle,
  waitLogAfter,
  waitTx,
  type Bench,
} from './support/e2e-rig.js';
import type { InProcessRig } from '../../rigs/in-process-rig.js';
import { selectAndPay } from './support/dynamic-payment.js';
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
      catalog: { '30': { name: 'Beer', ageLimit: 18 } },
    },
  });
});
after(async () => bench?.close());
afterEach(async () => {
  assertLedgerClean(bench.rig);
  assertSalesBalance(bench.rig);
  await vmcIdle(bench.rig);
});

function member(text: string | null, ...path: string[]): string | null {
  let cur: string | null = text;
  for (const name of path) cur = cur === null ? null : memberText(cur, name);
  return cur;
}

test(
  'underpaid: AuthAmount 0.50 for a 1.50 QR -> vend denied, Void ReasonCode 3 with the approving PaymentInfo bytes',
  T,
  async () => {
    const { rig, proxy } = bench;
    rig.gateway.addRules([{ op: 'GenerateQR', amount: 1.5, times: 1, behaviour: { kind: 'pay-amount', amount: 0.5 } }]);
    const pay = await selectAndPay(rig, 3, 1.5);
    assert.deepEqual(await pay.answer, { kind: 'vend-deny' }, 'a short payment does not buy the item');
    assert.equal(await pay.result, 'voided');
    const t = await waitTx(rig, pay.txId, (x) => x.accepted.Void === 1, 'the Void');
    assert.equal(t.state, 'voided');
    assert.equal(t.void?.reasonCode, 3);

    const approving = proxy.of('Inquiry', pay.txId).find((e) => e.response?.Status.Verdict === 'Approved')!;
    assert.equal(member(approving.responseText, 'PaymentInfo', 'AuthAmount'), '0.50');
    const voided = proxy.of('Void', pay.txId)[0]!.requestText;
    assert.equal(member(voided, 'PaymentInfo'), member(approving.responseText, 'PaymentInfo'), 'byte for byte');
    assert.equal(member(voided, 'ReasonCode'), '3');
    assert.equal(JSON.parse(member(voided, 'ReasonText')!), 'amount paid below price: paid 0.50, price 1.50');
    assert.equal(member(voided, 'BasicInfo', 'Amount'), '1.50');
    assert.deepEqual(
      lastSession(rig).vends.map((v) => v.outcome),
      ['denied'],
    );
  },
);

test('overpaid: AuthAmount 2.00 for a 1.50 QR -> the vend is approved and what was paid is recorded', T, async () => {
  const { rig } = bench;
  rig.gateway.addRules([{ op: 'GenerateQR', amount: 1.5, times: 1, behaviour: { kind: 'pay-amount', amount: 2 } }]);
  const mark = logMark(rig);
  const pay = await selectAndPay(rig, 4, 1.5);
  assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 1.5 });
  const paid = await waitLogAfter(
    rig,
    mark,
    (l) => l.msg === 'dynamic QR paid' && l.txId === pay.txId,
    'the payment record',
  );
  assert.equal(paid.paidMinor, 200);
  assert.ok(rig.vmc.vendSuccess());
  assert.equal(await pay.result, 'vended');
});

test(
  'bytes of a payment for an 18+ item: decimals everywhere, AgeLimitation, and the Void repeats the GenerateQR time',
  T,
  async () => {
    const { rig, proxy } = bench;
    const pay = await selectAndPay(rig, 30, 2.5);
    assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 2.5 });
    await pastSecondOf(proxy.of('GenerateQR', pay.txId)[0]!); // the Void is sent in a later second than the GenerateQR
    assert.ok(rig.vmc.vendFailure(3));
    assert.equal(await pay.result, 'voided');
    await waitTx(rig, pay.txId, (x) => x.accepted.Void === 1, 'the Void');

    const gen = proxy.of('GenerateQR', pay.txId)[0]!;
    assert.equal(member(gen.requestText, 'BasicInfo', 'Amount'), '2.50');
    assert.equal(member(gen.requestText, 'BasicInfo', 'AgeLimitation'), '18');
    assert.match(gen.requestText, /"Product":\[\{"Code":30,"Price":2\.50,"Name":"Beer"/);
    const inquiry = proxy.of('Inquiry', pay.txId)[0]!.requestText;
    const qrData = gen.response!.QRData as { SrvTranId: string; RRN: string };
    assert.equal(
      member(inquiry, 'PaymentInfo'),
      `{"SrvTranId":${JSON.stringify(qrData.SrvTranId)},"RRN":${JSON.stringify(qrData.RRN)},"AuthAmount":2.50}`,
    );
    assert.equal(member(inquiry, 'BasicInfo', 'AgeLimitation'), '18');
    const voided = proxy.of('Void', pay.txId)[0]!.requestText;
    assert.equal(
      member(voided, 'BasicInfo', 'MachineAuTime'),
      member(gen.requestText, 'BasicInfo', 'MachineAuTime'),
      'the time of the authorization (GenerateQR) it closes',
    );
    assert.equal(member(voided, 'BasicInfo', 'AgeLimitation'), '18');
    assert.equal(member(voided, 'BasicInfo', 'Amount'), '2.50');
  },
);
