/**
 * The Dynamic QR payment's terms (src/flows/dynamic-qr/machine.ts): what an approving Inquiry
 * paid against the price, at prices that do not multiply exactly by 100 and in a currency with
 * no decimals; a foreign-currency payment after the VMC gave up (voided, no deny to send); a QR
 * answer without its optional members; a closed payment that ignores everything.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  initialState,
  paidAgainstPrice,
  step,
  type DynamicQrContext,
  type DynamicQrInput,
  type DynamicQrState,
} from '../../../src/flows/dynamic-qr/machine.js';
import { RawJson } from '../../../src/gateway/wire/index.js';

const ctx: DynamicQrContext = {
  requestId: 'r7',
  txId: 'TX-DYN-TERMS-1',
  amount: 4.35,
  item: 3,
  deadlineMs: 10_000,
  expiresAtWallMs: 10_000,
  pollIntervalMs: 1_000,
  currencyCode: 'EUR',
  decimalPlaces: 2,
};

test('paid against the price: short below it by a cent, not short at or above it, none given = not short', () => {
  const at = (pi: string, price = 4.35, decimalPlaces = 2) =>
    paidAgainstPrice(new RawJson(pi), { amount: price, decimalPlaces });
  assert.deepEqual(at('{"AuthAmount":4.35}'), { short: false, paidMinor: 435 });
  assert.deepEqual(at('{"AuthAmount":4.34}'), { short: true, paidMinor: 434 });
  assert.deepEqual(at('{"AuthAmount":4.36}'), { short: false, paidMinor: 436 });
  assert.deepEqual(at('{"AuthAmount":0.29}', 0.29), { short: false, paidMinor: 29 });
  assert.deepEqual(at('{"AuthAmount":0.28}', 0.29), { short: true, paidMinor: 28 });
  assert.deepEqual(at('{"AuthAmount":119}', 120, 0), { short: true, paidMinor: 119 });
  assert.deepEqual(at('{"AuthAmount":120}', 120, 0), { short: false, paidMinor: 120 });
  assert.deepEqual(at('{"SrvTranId":"S1"}'), { short: false, paidMinor: null });
  // Nothing, or less than nothing, is short; a negative AuthAmount has no paid amount to record.
  assert.deepEqual(at('{"AuthAmount":0}'), { short: true, paidMinor: 0 });
  assert.deepEqual(at('{"AuthAmount":-1}'), { short: true, paidMinor: null });
  assert.deepEqual(at('{"AuthAmount":90071992547409.91}'), { short: false, paidMinor: Number.MAX_SAFE_INTEGER });
  // Beyond what a double holds exactly: still compared exactly, but no paidMinor to record.
  assert.deepEqual(at('{"AuthAmount":900719925474099.93}'), { short: false, paidMinor: null });
});

function run(inputs: DynamicQrInput[], from: DynamicQrState = initialState(ctx)) {
  let state = from;
  const effects = [];
  for (const input of inputs) {
    const t = step(state, input);
    state = t.state;
    effects.push(...t.effects);
  }
  return { state, effects };
}

const generated: DynamicQrInput = { tag: 'generated', outcome: { kind: 'approved', response: {}, elapsedMs: 1 } };

test('a QR answer without QRCode or QRData: shown as empty text, the ids recorded as unknown', () => {
  const { state, effects } = run([generated]);
  assert.equal(state.tag, 'polling');
  assert.deepEqual(effects[0], {
    tag: 'record',
    record: { tag: 'qr-issued', qr: { qrCode: '', rrn: null, srvTranId: null, channelId: null } },
  });
});

test('paid in another currency after the vend request ended: voided with its PaymentInfo, no deny', () => {
  const pi = '{"SrvTranId":"S2","AuthAmount":4.35}';
  const foreign: DynamicQrInput = {
    tag: 'inquired',
    outcome: {
      kind: 'declined',
      code: 8,
      message: 'other currency',
      response: {},
      elapsedMs: 1,
      bodyText: `{"PaymentInfo":${pi}}`,
      heldFunds: true,
      currencies: { asked: 'EUR/978', answered: 'USD/840' },
    },
  };
  const { state, effects } = run([generated, { tag: 'request-ended', reason: 'timeout', byConsumer: false }, foreign]);
  assert.deepEqual(state.tag === 'closed' ? state.result : state.tag, 'voided');
  const after = effects.slice(effects.findIndex((e) => e.tag === 'inquire') + 1);
  assert.deepEqual(
    after.map((e) => e.tag),
    ['record', 'void', 'show', 'currency'],
  );
  // The alarm GATEWAY_CURRENCY_MISMATCH names the gateway's answer (src/flows/currency-alarm.ts).
  const mismatch = { declineCode: 8, asked: 'EUR/978', answered: 'USD/840' };
  assert.deepEqual(after.at(-1), { tag: 'currency', mismatch });
  const v = after.find((e) => e.tag === 'void');
  assert.ok(v && v.tag === 'void');
  assert.equal(v.paymentInfo.text, pi);
  assert.deepEqual(v.reason, { reasonCode: 3, reasonText: 'paid in another currency than asked' });
});

test('a closed payment ignores every later input', () => {
  const closed = run([
    { tag: 'generated', outcome: { kind: 'declined', code: 5, message: null, response: {}, elapsedMs: 1 } },
  ]).state;
  assert.equal(closed.tag, 'closed');
  for (const input of [
    generated,
    { tag: 'poll-due', nowMs: 1 },
    { tag: 'request-ended', reason: 'x', byConsumer: true },
  ] as DynamicQrInput[]) {
    const t = step(closed, input);
    assert.equal(t.state, closed);
    assert.deepEqual(t.effects, []);
  }
});
