/**
 * The closing bodies (src/flows/bodies.ts) built from ledger records directly: the Settlement's
 * amount and products are the charged vends only, at prices that do not multiply exactly by 100;
 * a Cancel after an unanswered Authorization asks for what that Authorization would have asked
 * (the pre-auth capped by the balance); a Cancel or Settlement with no approving PaymentInfo is
 * a bug refused loudly; the authorization's MachineAuTime and AgeLimitation are repeated.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';
import { isQrvendError } from '../../src/core/errors.js';
import { createRequestBuilders } from '../../src/gateway/envelope.js';
import { closedAuthorization, outboxBodies, soldItems } from '../../src/flows/bodies.js';
import type { TxRecord, VendLine } from '../../src/ledger/index.js';

const { config } = loadConfig({ env: {} });
const builders = createRequestBuilders(config, { hwSerial: 'HW', fwVersion: 'test', type: 'qrvend' });
const bodies = outboxBodies(() => builders, { preauthAmount: 5, decimalPlaces: 2 });

function tx(over: Partial<TxRecord> = {}): TxRecord {
  return {
    txId: 'TX-BODIES-0001',
    flow: 'static',
    state: 'session_open',
    decimalPlaces: 2,
    amount: 5,
    authAmount: 5,
    item: null,
    requestId: null,
    startData: { appUserId: 'u', balance: null },
    paymentInfoText: '{"SrvTranId":"S1","AuthAmount":5.00}',
    paymentInfo: null,
    qrDataText: null,
    qrData: null,
    declineCode: null,
    machineAuTime: '261125053000',
    ageLimit: 18,
    createdAtMs: Date.UTC(2026, 10, 26, 5, 0, 0),
    updatedAtMs: 0,
    ...over,
  };
}

const vend = (seq: number, price: number, state: VendLine['state']): VendLine => ({
  txId: 'TX-BODIES-0001',
  seq,
  item: seq * 10,
  price,
  state,
  createdAtMs: 0,
  updatedAtMs: 0,
});

test('Settlement: the sum and the products of the charged vends only, the PaymentInfo text unchanged', () => {
  const vends = [vend(1, 0.29, 'success'), vend(2, 1.15, 'failed'), vend(3, 4.35, 'success'), vend(4, 2, 'timeout')];
  assert.deepEqual(soldItems(vends), [
    { item: 10, price: 0.29 },
    { item: 30, price: 4.35 },
  ]);
  const text = bodies.settlement(tx(), vends);
  const body = JSON.parse(text);
  assert.equal(body.BasicInfo.Amount, 4.64);
  assert.equal(body.Products.length, 2);
  assert.ok(
    text.includes('"PaymentInfo":{"SrvTranId":"S1","AuthAmount":5.00}'),
    'the PaymentInfo is sent back byte for byte',
  );
  assert.equal(body.BasicInfo.MachineAuTime, '261125053000');
  assert.equal(body.BasicInfo.AgeLimitation, 18);
});

test('Cancel after an unanswered Authorization: the amount it had, or the pre-auth capped by the balance', () => {
  const recorded = JSON.parse(bodies.cancelAfterTimeout(tx({ amount: 3.15 })));
  assert.equal(recorded.BasicInfo.Amount, 3.15);
  assert.deepEqual(recorded.PaymentInfo, { IsGatewayTimeout: true });
  assert.equal(recorded.ReasonCode, 3);
  assert.equal(recorded.ReasonText, 'authorization unanswered (gateway timeout)');
  const capped = JSON.parse(
    bodies.cancelAfterTimeout(tx({ amount: null, startData: { appUserId: 'u', balance: 1.159 } })),
  );
  assert.equal(capped.BasicInfo.Amount, 1.15);
  const noBalance = JSON.parse(bodies.cancelAfterTimeout(tx({ amount: null, startData: null })));
  assert.equal(noBalance.BasicInfo.Amount, 5);
});

test('Cancel: the approved amount, then the amount asked; with its reason', () => {
  const body = JSON.parse(bodies.cancel(tx({ authAmount: 2.5, amount: 5 }), 2, 'consumer walked away'));
  assert.equal(body.BasicInfo.Amount, 2.5);
  assert.equal(body.ReasonCode, 2);
  assert.equal(body.ReasonText, 'consumer walked away');
  assert.equal(JSON.parse(bodies.cancel(tx({ authAmount: null, amount: 4.35 }), 3, 'x')).BasicInfo.Amount, 4.35);
});

test('a closing that needs the approving PaymentInfo and has none is refused, naming the transaction', () => {
  const none = tx({ paymentInfoText: null });
  const refused = (err: unknown) =>
    isQrvendError(err) &&
    err.code === 'INTERNAL' &&
    err.message === 'transaction TX-BODIES-0001 has no PaymentInfo to send back' &&
    /bug/.test(err.hint ?? '');
  assert.throws(() => bodies.cancel(none, 3, 'x'), refused);
  assert.throws(() => bodies.settlement(none, [vend(1, 1, 'success')]), refused);
  // A Void before any approval carries IsGatewayTimeout instead (design 3).
  assert.deepEqual(
    JSON.parse(bodies.void(tx({ flow: 'dynamic', paymentInfoText: null, amount: 1.5 }), 3, 'unknown')).PaymentInfo,
    { IsGatewayTimeout: true },
  );
  const paidVoid = JSON.parse(bodies.void(tx({ flow: 'dynamic', amount: 1.15 }), 3, 'x'));
  assert.deepEqual(paidVoid.PaymentInfo, { SrvTranId: 'S1', AuthAmount: 5 });
  assert.equal(paidVoid.BasicInfo.Amount, 1.15, 'a Void carries the price');
  assert.equal(JSON.parse(bodies.void(tx({ flow: 'dynamic', amount: null }), 3, 'x')).BasicInfo.Amount, 0);
});

test('closedAuthorization: the recorded MachineAuTime, or the creation time when none was kept', () => {
  assert.deepEqual(closedAuthorization({ machineAuTime: '010203040506', ageLimit: null, createdAtMs: 0 }), {
    machineAuTime: '010203040506',
    ageLimit: null,
  });
  const fallback = closedAuthorization({
    machineAuTime: null,
    ageLimit: 16,
    createdAtMs: Date.UTC(2026, 10, 26, 5, 0, 0),
  });
  assert.equal(fallback.ageLimit, 16);
  assert.match(fallback.machineAuTime, /^\d{12}$/);
});
