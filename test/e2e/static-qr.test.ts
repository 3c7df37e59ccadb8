/**
 * End to end, Static QR inside the session: the real daemon wiring in this process on the
 * in-memory wire (rigs/in-process-rig.ts), the gateway simulator on loopback behind a recording
 * proxy. Multi-vend, the pre-auth capped by Balance, local denial when the price exceeds the
 * remaining funds, vend failures.
 *
 * One daemon for the file; every test ends its session and waits for the closing operation, so
 * the next one starts from an idle reader.
 */
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertLedgerClean,
  assertSalesBalance,
  createInProcessBench,
  lastSession,
  vmcIdle,
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
    config: {
      actor: { id: 4711, merchantId: 'M-RIG', mcc: 5814 },
      customData: { Machine: '{"route":"R7"}' },
      catalog: { '12': { name: 'Sparkling water', measurement: 500, unitOfMeasurement: 'ml' } },
    },
  });
});
after(async () => bench?.close());
afterEach(async () => {
  assertLedgerClean(bench.rig);
  assertSalesBalance(bench.rig);
  await vmcIdle(bench.rig);
});

test('two vends approved locally, one Settlement for both, the PaymentInfo echoed unchanged', T, async () => {
  const { rig, proxy } = bench;
  const session = await openSession(rig);
  assert.equal(session.funds, 10);
  await buy(rig, 12, 1.5);
  await buy(rig, 7, 2);
  assert.ok(rig.vmc.endSession());

  const t = await waitTx(rig, session.txId, (x) => x.state === 'settled', 'the Settlement');
  assert.equal(t.authorization?.amount, 10);
  assert.equal(t.settlement?.amount, 3.5);
  assert.equal(t.settlement?.products, 2);
  assert.deepEqual(t.requests, { Authorization: 1, Settlement: 1, Cancel: 0, GenerateQR: 0, Inquiry: 0, Void: 0 });
  assert.deepEqual(t.accepted, { Settlement: 1, Cancel: 0, Void: 0 });

  const auth = proxy.of('Authorization', session.txId);
  const settle = proxy.of('Settlement', session.txId);
  assert.equal(auth.length, 1);
  assert.equal(settle.length, 1);
  const body = settle[0]!.request!;
  // PaymentInfo goes back exactly as the Authorization returned it: nothing added, removed or changed.
  assert.deepEqual(body.PaymentInfo, auth[0]!.response!.PaymentInfo);
  assert.equal(body.BasicInfo.Amount, 3.5);
  assert.deepEqual(body.Products, [
    { Code: 12, Price: 1.5, Name: 'Sparkling water', Measurement: 500, UnitOfMeasurement: 'ml' },
    { Code: 7, Price: 2, Name: 'Item 7', Measurement: 1, UnitOfMeasurement: 'Unit' },
  ]);
  // The envelope every request carries, from config and hardware.
  for (const sent of [auth[0]!.request!, body]) {
    assert.equal(sent.BasicInfo.TransactionId, session.txId);
    assert.equal(sent.BasicInfo.CurrencyCode, 'EUR');
    assert.equal(sent.BasicInfo.CurrencyNumeric, '978');
    assert.match(sent.BasicInfo.MachineAuTime, /^\d{12}$/);
    assert.equal(sent.ActorInfo.Id, 4711);
    assert.equal(sent.ActorInfo.MerchantId, 'M-RIG');
    assert.deepEqual(sent.CustomData, { Machine: '{"route":"R7"}' });
    assert.equal(sent.DeviceInfo.HwSerial, 'RIG-HW-1');
    assert.match(sent.DeviceInfo.FWVersion, /mdb\/qrvend-sim-1\.0/);
    assert.equal(sent.MachineInfo.TerminalId, 'RIG-TERMINAL-1');
    assert.equal(sent.MachineInfo.DecimalPlace, 2);
  }
  assert.deepEqual(
    lastSession(rig).vends.map((v) => v.outcome),
    ['success', 'success'],
  );
});

test(
  'Balance caps the pre-auth; funds used up end the session from the reader (C,STOP), Settlement of all',
  T,
  async () => {
    const { rig, proxy } = bench;
    const session = await openSession(rig, { balance: 3.5 });
    assert.equal(session.funds, 3.5, 'the session opens with the capped authorization');
    assert.equal(proxy.of('Authorization', session.txId)[0]!.request!.BasicInfo.Amount, 3.5);
    await buy(rig, 12, 1.5);
    const stop = rig.nextCommand((c) => c.kind === 'stop', 10_000, 'C,STOP once the funds are used up');
    await buy(rig, 7, 2);
    await stop;

    const t = await waitTx(rig, session.txId, (x) => x.state === 'settled', 'the Settlement');
    assert.equal(t.authorization?.amount, 3.5);
    assert.equal(t.settlement?.amount, 3.5);
    assert.equal(t.settlement?.products, 2);
    assert.equal(lastSession(rig).end, 'reader-stop');
  },
);

test(
  'a price above the remaining funds is denied locally; the session goes on; only the sale is settled',
  T,
  async () => {
    const { rig } = bench;
    const session = await openSession(rig);
    assert.deepEqual(await select(rig, 12, 10.5), { kind: 'vend-deny' }, 'above the 10.00 authorized');
    await buy(rig, 3, 4);
    assert.deepEqual(await select(rig, 7, 6.5), { kind: 'vend-deny' }, 'above the 6.00 remaining');
    await buy(rig, 7, 6);
    // Everything is spent: the reader ends the session itself.
    const t = await waitTx(rig, session.txId, (x) => x.state === 'settled', 'the Settlement');
    assert.equal(t.settlement?.amount, 10);
    assert.equal(t.settlement?.products, 2);
    assert.deepEqual(
      lastSession(rig).vends.map((v) => v.outcome),
      ['denied', 'success', 'denied', 'success'],
    );
    assert.equal(t.requests.Authorization, 1, 'no network round trip for the local approvals');
  },
);

test(
  'a vend that fails to dispense is not charged: nothing sold -> Cancel (ReasonCode 3) with the PaymentInfo',
  T,
  async () => {
    const { rig, proxy } = bench;
    const session = await openSession(rig);
    await buy(rig, 12, 1.5, 'failure');
    assert.ok(rig.vmc.endSession());

    const t = await waitTx(rig, session.txId, (x) => x.state === 'cancelled', 'the Cancel');
    assert.deepEqual(t.requests, { Authorization: 1, Settlement: 0, Cancel: 1, GenerateQR: 0, Inquiry: 0, Void: 0 });
    assert.equal(t.cancel?.verdict, 'Approved');
    assert.equal(t.cancel?.reasonCode, 3);
    assert.equal(t.cancel?.gatewayTimeout, false);
    const cancel = proxy.of('Cancel', session.txId)[0]!.request!;
    assert.deepEqual(cancel.PaymentInfo, proxy.of('Authorization', session.txId)[0]!.response!.PaymentInfo);
    assert.equal(cancel.ReasonCode, 3);
    assert.deepEqual(
      lastSession(rig).vends.map((v) => v.outcome),
      ['failed'],
    );
  },
);

test('a failed vend among good ones: Settlement of the dispensed ones only', T, async () => {
  const { rig, proxy } = bench;
  const session = await openSession(rig);
  await buy(rig, 12, 1.5);
  await buy(rig, 7, 2, 'failure');
  await buy(rig, 4, 1.2);
  assert.ok(rig.vmc.endSession());

  const t = await waitTx(rig, session.txId, (x) => x.state === 'settled', 'the Settlement');
  assert.equal(t.settlement?.amount, 2.7);
  assert.equal(t.settlement?.products, 2);
  assert.equal(t.requests.Cancel, 0);
  const body = proxy.of('Settlement', session.txId)[0]!.request!;
  assert.deepEqual(
    body.Products.map((p: { Code: number; Price: number }) => [p.Code, p.Price]),
    [
      [12, 1.5],
      [4, 1.2],
    ],
  );
});

test('amounts add up in minor units: 0.10 + 0.20 is settled as 0.30', T, async () => {
  const { rig, proxy } = bench;
  const session = await openSession(rig);
  await buy(rig, 1, 0.1);
  await buy(rig, 2, 0.2);
  assert.ok(rig.vmc.endSession());
  const t = await waitTx(rig, session.txId, (x) => x.state === 'settled', 'the Settlement');
  assert.equal(t.settlement?.amount, 0.3);
  assert.equal(
    proxy.of('Settlement', session.txId)[0]!.requestText.includes('"Amount":0.30,'),
    true,
    'written with the currency decimals',
  );
});
