/**
 * A Static QR Authorization approved in another currency than asked (docs/payments.md, "Answers in
 * another currency"), end to end: the real daemon wiring in this process with the VMC simulator on
 * the in-memory wire (rigs/in-process-rig.ts), the gateway simulator on loopback answering in
 * USD/840 what was asked in EUR/978 (a gateway that holds the approved amount: its Cancel releases
 * the Amount it carries), the daemon's own SQLite
 * ledger, and a real MQTT broker (aedes) where the alarm shows. The Authorization is read as a
 * decline; its Cancel carries the Authorization's Amount with the PaymentInfo as received; the
 * alarm GATEWAY_CURRENCY_MISMATCH names the answer; a refused Cancel is dead-lettered. A Dynamic
 * QR whose approving Inquiry names USD/840 (its BasicInfo) is refused the same way: the vend is
 * denied, the payment voided (ReasonCode 3, the Inquiry's PaymentInfo) and the alarm raised.
 *
 * One daemon for the file (an always-idle VMC, for the Dynamic QR's selection); tests run in order.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessRig, until, type InProcessRig } from '../../rigs/in-process-rig.js';
import { startAedesBroker, type TestBroker } from '../../rigs/broker/index.js';
import { readOutbox } from '../../src/ledger/admin.js';
import { DeclineCodes } from '../../src/gateway/protocol/index.js';
import type { FleetEvent } from '../../src/fleet/contract/messages.js';
import { OPERATOR_SCOPES, testKey, writeTrustFile } from '../fleet/support/operator-keys.js';
import { PREFIX, startWatcher, type FleetWatcher } from '../fleet/e2e/support/fleet-watcher.js';
import { lastSession, waitTx } from './support/e2e-rig.js';
import { selectAndPay } from './support/dynamic-payment.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const MACHINE = 'M-CURRENCY-1';
const T = { timeout: TEST_DEADLINE_MS };
const ALARM = 'GATEWAY_CURRENCY_MISMATCH';
const IN_USD = { kind: 'approve-in-currency', currencyCode: 'USD', currencyNumeric: '840' } as const;

let broker: TestBroker;
let rig: InProcessRig;
let watcher: FleetWatcher;
let scratch = '';
const operator = testKey('ops-currency', OPERATOR_SCOPES);

before(async () => {
  broker = await startAedesBroker();
  scratch = mkdtempSync(join(tmpdir(), 'qrvend-currency-e2e-'));
  const trustFile = writeTrustFile(scratch, [operator]);
  const fleet = { url: broker.url, topicPrefix: PREFIX, machineId: MACHINE, protocolVersion: 4, healthIntervalS: 5 };
  const machine = { currencyCode: 'EUR', currencyNumeric: '978' };
  const store = { backoffBaseMs: 50, backoffCapMs: 200 };
  // Always-idle: the consumer selects first for a Dynamic QR; a Static QR Start opens its session all the same.
  const mdb = { alwaysIdle: true };
  rig = await createInProcessRig({ config: { machine, mdb, fleet: { ...fleet, trustFile }, store } });
  watcher = await startWatcher(broker.url, 4, MACHINE, operator);
  await rig.startAgent(30_000);
});

after(async () => {
  await watcher?.close();
  await rig?.close();
  await broker?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const alarmEvent = (state: 'raised' | 'cleared') => (e: FleetEvent) =>
  e.kind === 'alarm' && (e as { code?: unknown }).code === ALARM && (e as { state?: unknown }).state === state;
const alarmsOf = (status: Record<string, unknown>) => (status.alarms as string[] | undefined) ?? [];
const outbox = () => readOutbox(join(rig.dir, 'ledger.sqlite'), { limit: 100 });

test(
  "approved in USD when EUR was asked: declined here, the whole hold cancelled with the Authorization's Amount " +
    'and PaymentInfo, the alarm raised naming the answer',
  T,
  async () => {
    const txId = 'CURRENCY-MISMATCH-0001';
    rig.gateway.addRules([{ op: 'Authorization', transactionId: txId, behaviour: IN_USD }]);
    const sessions = rig.vmc.records().length;
    const start = await rig.start({ transactionId: txId });
    assert.equal(start.outcome.kind, 'approved', 'the Start itself is answered before the Authorization');
    const gw = await waitTx(rig, txId, (t) => t.cancel?.verdict === 'Approved', 'the Cancel accepted', 30_000);
    assert.equal(gw.authorization?.currencyCode, 'USD');
    assert.equal(gw.cancel?.amount, gw.authorization?.amount, 'the Cancel releases the whole amount held');
    assert.ok((gw.cancel?.amount ?? 0) > 0);
    assert.equal(gw.cancel?.reasonCode, 3, 'cancelled by the machine');
    assert.equal(gw.state, 'cancelled');
    assert.equal(rig.vmc.records().length, sessions, 'no MDB session opened');
    assert.deepEqual(rig.gateway.ledger().rejected, [], 'the Cancel passed the strict checks (PaymentInfo as sent)');

    const row = outbox().rows.find((r) => r.txId === txId && r.op === 'Cancel');
    assert.ok(row, "the Cancel went through the daemon's outbox");
    const body = JSON.parse(row.body) as {
      BasicInfo: { Amount: number; CurrencyCode: string; CurrencyNumeric: string };
    };
    assert.deepEqual(body.BasicInfo.CurrencyCode + body.BasicInfo.CurrencyNumeric, 'EUR978', 'as the hold was asked');
    assert.equal(body.BasicInfo.Amount, gw.authorization?.amount);

    const raised = await watcher.waitForEvent(alarmEvent('raised'), 30_000, `${ALARM} raised`);
    const detail = String((raised as { detail?: unknown }).detail);
    assert.match(detail, /USD\/840/);
    assert.match(detail, /EUR\/978/);
    assert.match(detail, /code 8/);
    assert.ok(!detail.includes(rig.secretToken), 'no secret in the alarm');
    await until(() => watcher.statuses.some((s) => alarmsOf(s).includes(ALARM)), 30_000, `${ALARM} in the status`);
  },
);

test('the Cancel refused by the gateway: dead-lettered (OUTBOX_DEAD_LETTER) for a person', T, async () => {
  const txId = 'CURRENCY-MISMATCH-0002';
  rig.gateway.addRules([
    { op: 'Authorization', transactionId: txId, behaviour: IN_USD },
    { op: 'Cancel', transactionId: txId, behaviour: { kind: 'decline', code: DeclineCodes.NotAllowed, message: 'no' } },
  ]);
  await rig.start({ transactionId: txId });
  const gw = await waitTx(rig, txId, (t) => t.cancel?.verdict === 'Declined', 'the Cancel refused', 30_000);
  assert.equal(gw.state, 'authorized', 'the gateway still holds it');
  const isDead = () => outbox().rows.some((r) => r.txId === txId && r.status === 'dead');
  await until(isDead, 30_000, 'the Cancel dead-lettered');
  const dead = outbox().rows.find((r) => r.txId === txId)!;
  assert.equal(dead.op, 'Cancel');
  assert.equal(dead.lastCode, DeclineCodes.NotAllowed);
  assert.equal((JSON.parse(dead.body) as { BasicInfo: { Amount: number } }).BasicInfo.Amount, gw.authorization?.amount);
  const both = (s: Record<string, unknown>) =>
    alarmsOf(s).includes('OUTBOX_DEAD_LETTER') && alarmsOf(s).includes(ALARM);
  await until(() => watcher.statuses.some(both), 30_000, 'OUTBOX_DEAD_LETTER beside the currency alarm in the status');
});

test('an Authorization approved in the currency asked clears the alarm', T, async () => {
  const txId = 'CURRENCY-MISMATCH-0003';
  const opened = rig.nextCommand((c) => c.kind === 'start', 20_000, 'C,START');
  await rig.start({ transactionId: txId });
  await opened;
  await watcher.waitForEvent(alarmEvent('cleared'), 30_000, `${ALARM} cleared`);
  assert.ok(rig.vmc.endSession());
  await waitTx(rig, txId, (t) => t.state === 'cancelled', 'the empty session cancelled', 30_000);
});

test(
  'a Dynamic QR paid in USD when EUR was asked: the vend denied, the payment voided (ReasonCode 3, the ' +
    "Inquiry's PaymentInfo), the alarm raised naming both currencies",
  T,
  async () => {
    const price = 1.35;
    rig.gateway.addRules([{ op: 'GenerateQR', amount: price, times: 1, behaviour: IN_USD }]);
    const [events, statuses] = [watcher.events.length, watcher.statuses.length];
    const pay = await selectAndPay(rig, 7, price);
    assert.deepEqual(await pay.answer, { kind: 'vend-deny' }, 'no vend approved');
    assert.equal(await pay.result, 'voided');
    const gw = await waitTx(rig, pay.txId, (t) => t.void?.verdict === 'Approved', 'the Void accepted', 30_000);
    assert.equal(gw.authorization?.currencyCode, 'USD', 'the simulator answered the Inquiry in USD');
    assert.equal(gw.void?.reasonCode, 3, 'voided by the machine');
    assert.equal(gw.void?.gatewayTimeout, false, "the Void carries the approving Inquiry's PaymentInfo, not a timeout");
    assert.equal(gw.state, 'voided');
    assert.deepEqual(gw.requests, { Authorization: 0, Settlement: 0, Cancel: 0, GenerateQR: 1, Inquiry: 1, Void: 1 });
    assert.deepEqual(
      rig.gateway.ledger().rejected,
      [],
      "the Void passed the strict checks (the Inquiry's PaymentInfo)",
    );
    assert.deepEqual(
      lastSession(rig).vends.map((v) => v.outcome),
      ['denied'],
    );

    const row = outbox().rows.find((r) => r.txId === pay.txId && r.op === 'Void');
    assert.ok(row, "the Void went through the daemon's outbox");
    const body = JSON.parse(row.body) as { ReasonCode: number; PaymentInfo: Record<string, unknown> };
    assert.equal(body.ReasonCode, 3);
    assert.equal(body.PaymentInfo.AuthAmount, price, "the Inquiry's PaymentInfo as received");

    const ofThisPayment = (e: FleetEvent) =>
      alarmEvent('raised')(e) && String((e as { detail?: unknown }).detail).includes(pay.txId);
    await until(() => watcher.events.slice(events).some(ofThisPayment), 30_000, `${ALARM} raised for ${pay.txId}`);
    const detail = String((watcher.events.slice(events).find(ofThisPayment) as { detail?: unknown }).detail);
    assert.match(detail, /Dynamic QR payment/);
    assert.match(detail, /USD\/840/);
    assert.match(detail, /EUR\/978/);
    const raisedInStatus = () => watcher.statuses.slice(statuses).some((s) => alarmsOf(s).includes(ALARM));
    await until(raisedInStatus, 30_000, `${ALARM} in the status`);
  },
);
