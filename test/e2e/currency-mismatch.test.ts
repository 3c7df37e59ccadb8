/**
 * A Static QR Authorization approved in another currency than asked (docs/payments.md, "Answers in
 * another currency"), end to end: the real daemon wiring in this process with the VMC simulator on
 * the in-memory wire (rigs/in-process-rig.ts), the gateway simulator on loopback answering in
 * USD/840 what was asked in EUR/978 (a gateway that holds the approved amount: its Cancel releases
 * the Amount it carries), the daemon's own SQLite
 * ledger, and a real MQTT broker (aedes) where the alarm shows. The Authorization is read as a
 * decline; its Cancel carries the Authorization's Amount with the PaymentInfo as received; the
 * alarm GATEWAY_CURRENCY_MISMATCH names the answer; a refused Cancel is dead-lettered.
 *
 * One daemon for the file; tests run in order.
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
import { waitTx } from './support/e2e-rig.js';
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
  rig = await createInProcessRig({ config: { machine, fleet: { ...fleet, trustFile }, store } });
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
