/**
 * The Dynamic QR machine's effects, compared whole (src/flows/dynamic-qr/machine.ts): what is
 * recorded, in which order, what the VMC is told, what the screen shows and when the next poll
 * goes. machine.test.ts checks the decisions by their tags; a record emptied, an amount or flag
 * changed, an effect dropped or reordered fails here. Prices that do not multiply exactly by 100.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RawJson } from '../../../src/gateway/wire/index.js';
import {
  initialState,
  inquiryVerdict,
  paymentInfoFromQr,
  step,
  type DynamicQrContext,
  type DynamicQrInput,
  type DynamicQrState,
} from '../../../src/flows/dynamic-qr/machine.js';

const ctx: DynamicQrContext = {
  requestId: 'rq-9',
  txId: 'TX-DYN-EXACT-1',
  amount: 0.29,
  item: 4,
  deadlineMs: 10_000,
  expiresAtWallMs: 1_764_000_000_000,
  pollIntervalMs: 1_000,
  currencyCode: 'EUR',
  decimalPlaces: 2,
};

const qr = { qrCode: 'https://pay.example/q/9', rrn: 'RRN9', srvTranId: 'S9', channelId: 'C9' };
const generated: DynamicQrInput = {
  tag: 'generated',
  outcome: {
    kind: 'approved',
    response: { QRCode: qr.qrCode, QRData: { RRN: 'RRN9', SrvTranId: 'S9', ChannelId: 'C9' } },
    elapsedMs: 1,
  },
};
const PI = '{"SrvTranId":"S9","AuthAmount":0.29}';
const paid: DynamicQrInput = {
  tag: 'inquired',
  outcome: { kind: 'approved', response: {}, bodyText: `{"PaymentInfo":${PI}}`, elapsedMs: 1 },
};
const pending: DynamicQrInput = {
  tag: 'inquired',
  outcome: { kind: 'declined', code: 993, message: null, response: {}, elapsedMs: 1 },
};

/** Effects with each PaymentInfo as `PI:` and its exact text, so whole effects compare with deepEqual. */
function plain(value: unknown): any {
  if (value instanceof RawJson) return `PI:${value.text}`;
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

function run(inputs: DynamicQrInput[], from: DynamicQrState = initialState(ctx)) {
  let state = from;
  const steps: unknown[][] = [];
  for (const input of inputs) {
    const t = step(state, input);
    state = t.state;
    steps.push(plain(t.effects));
  }
  return { state, steps, last: steps.at(-1)! };
}

const qrScreen = {
  kind: 'dynamic-qr',
  qrText: qr.qrCode,
  amount: 0.29,
  currencyCode: 'EUR',
  decimalPlaces: 2,
  item: 4,
  expiresAtMs: 1_764_000_000_000,
};

test('issued: the QR recorded with its ids, shown with the price and deadline, the first poll scheduled', () => {
  const { state, last } = run([generated]);
  assert.deepEqual(last, [
    { tag: 'record', record: { tag: 'qr-issued', qr } },
    { tag: 'show', screen: qrScreen },
    { tag: 'schedule-poll', inMs: 1_000 },
  ]);
  assert.deepEqual(state, { tag: 'polling', ctx, qr, attempts: 0, inFlight: false, lastSent: false, ended: null });
});

test('not issued: declined with its code, or failed; the vend denied, nothing owed', () => {
  const declined = run([
    { tag: 'generated', outcome: { kind: 'declined', code: 5, message: 'no', response: {}, elapsedMs: 1 } },
  ]);
  assert.deepEqual(declined.last, [
    {
      tag: 'record',
      record: { tag: 'closed-unpaid', result: 'not-issued', code: 5, detail: 'GenerateQR declined (code 5)' },
    },
    { tag: 'main', message: { type: 'vend.deny', requestId: 'rq-9', reason: 'GenerateQR declined (code 5)' } },
    { tag: 'show', screen: { kind: 'declined', reason: 'qr-unavailable', code: 5 } },
  ]);
  assert.deepEqual(declined.state, { tag: 'closed', ctx, result: 'not-issued' });
  const failed = run([
    { tag: 'generated', outcome: { kind: 'transport', failure: 'reset', detail: 'x', httpStatus: null, elapsedMs: 1 } },
  ]);
  assert.deepEqual(failed.last, [
    {
      tag: 'record',
      record: { tag: 'closed-unpaid', result: 'not-issued', code: null, detail: 'GenerateQR failed: reset' },
    },
    { tag: 'main', message: { type: 'vend.deny', requestId: 'rq-9', reason: 'GenerateQR failed: reset' } },
    { tag: 'show', screen: { kind: 'declined', reason: 'qr-unavailable', code: null } },
  ]);
});

test('the request ended while the QR was generated: recorded issued and cancelled, never shown', () => {
  const { state, steps } = run([{ tag: 'request-ended', reason: 'cancel pressed', byConsumer: true }, generated]);
  assert.deepEqual(steps[0], []);
  assert.deepEqual(steps[1], [
    { tag: 'record', record: { tag: 'qr-issued', qr } },
    {
      tag: 'record',
      record: {
        tag: 'closed-unpaid',
        result: 'cancelled',
        code: null,
        detail: 'vend request ended before the QR was shown',
      },
    },
  ]);
  assert.deepEqual(state, { tag: 'closed', ctx, result: 'cancelled' });
});

test('polls count up; the poll whose interval reaches the deadline is the last; one in flight is not doubled', () => {
  const polling = run([generated]).state;
  const first = step(polling, { tag: 'poll-due', nowMs: 1_000 });
  assert.deepEqual(plain(first.effects), [{ tag: 'inquire', attempt: 1, isLast: false, qr }]);
  assert.deepEqual(step(first.state, { tag: 'poll-due', nowMs: 2_000 }), { state: first.state, effects: [] });
  const answered = step(first.state, pending);
  assert.deepEqual(plain(answered.effects), [{ tag: 'schedule-poll', inMs: 1_000 }]);
  // 9,000 + 1,000 reaches the 10,000 deadline exactly: last.
  const second = step(answered.state, { tag: 'poll-due', nowMs: 9_000 });
  assert.deepEqual(plain(second.effects), [{ tag: 'inquire', attempt: 2, isLast: true, qr }]);
  const justBefore = step(answered.state, { tag: 'poll-due', nowMs: 8_999 });
  assert.deepEqual(plain(justBefore.effects), [{ tag: 'inquire', attempt: 2, isLast: false, qr }]);
});

test('paid: recorded paid (in minor units) and vend-approved before the VMC is told, then the vending screen', () => {
  const { state, last } = run([generated, { tag: 'poll-due', nowMs: 1 }, paid]);
  assert.deepEqual(last, [
    { tag: 'record', record: { tag: 'paid', paymentInfo: `PI:${PI}`, paidMinor: 29 } },
    { tag: 'record', record: { tag: 'vend-approved' } },
    { tag: 'main', message: { type: 'vend.approve', requestId: 'rq-9', txId: 'TX-DYN-EXACT-1', amount: 0.29 } },
    { tag: 'show', screen: { kind: 'vending', amount: 0.29, currencyCode: 'EUR', decimalPlaces: 2, item: 4 } },
    { tag: 'currency', mismatch: null }, // paid in the currency asked: GATEWAY_CURRENCY_MISMATCH clears
  ]);
  assert.equal(state.tag, 'paid');
  const vended = step(state, { tag: 'vend-result', outcome: 'success' });
  assert.deepEqual(plain(vended.effects), [
    { tag: 'record', record: { tag: 'vended' } },
    {
      tag: 'show',
      screen: { kind: 'thank-you', amount: 0.29, currencyCode: 'EUR', decimalPlaces: 2, txId: 'TX-DYN-EXACT-1' },
    },
  ]);
  assert.deepEqual(vended.state, { tag: 'closed', ctx, result: 'vended' });
});

test('paid one cent short: denied first, recorded paid with what was paid, voided (reason 3), told on screen', () => {
  const short = '{"SrvTranId":"S9","AuthAmount":0.28}';
  const { state, last } = run([
    generated,
    { tag: 'poll-due', nowMs: 1 },
    {
      tag: 'inquired',
      outcome: { kind: 'approved', response: {}, bodyText: `{"PaymentInfo":${short}}`, elapsedMs: 1 },
    },
  ]);
  const reason = { reasonCode: 3, reasonText: 'amount paid below price: paid 0.28, price 0.29' };
  assert.deepEqual(last, [
    { tag: 'main', message: { type: 'vend.deny', requestId: 'rq-9', reason: reason.reasonText } },
    { tag: 'record', record: { tag: 'paid', paymentInfo: `PI:${short}`, paidMinor: 28 } },
    { tag: 'void', paymentInfo: `PI:${short}`, reason },
    { tag: 'show', screen: { kind: 'declined', reason: 'underpaid-reversed', code: null } },
  ]);
  assert.deepEqual(state, { tag: 'closed', ctx, result: 'voided' });
});

test('paid after the request ended: voided with the cause (2 by the consumer), nothing denied', () => {
  const { state, last } = run([
    generated,
    { tag: 'poll-due', nowMs: 1 },
    { tag: 'request-ended', reason: 'cancel pressed', byConsumer: true },
    paid,
  ]);
  assert.deepEqual(last, [
    {
      tag: 'void',
      paymentInfo: `PI:${PI}`,
      reason: { reasonCode: 2, reasonText: 'paid after the vend request ended: cancel pressed' },
    },
    { tag: 'show', screen: { kind: 'declined', reason: 'cancelled-reversed', code: null } },
  ]);
  assert.deepEqual(state, { tag: 'closed', ctx, result: 'voided' });
});

test('the request ended with no poll in flight: one last poll at once, flagged last', () => {
  const polling = run([generated]).state;
  const t = step(polling, { tag: 'request-ended', reason: 'timeout', byConsumer: false });
  assert.deepEqual(plain(t.effects), [{ tag: 'inquire', attempt: 1, isLast: true, qr }]);
  assert.deepEqual(t.state, {
    ...polling,
    attempts: 1,
    inFlight: true,
    lastSent: true,
    ended: { reason: 'timeout', byConsumer: false },
  });
  // Its pending answer closes the payment as cancelled, nothing owed, nothing denied.
  const closed = step(t.state, pending);
  assert.deepEqual(plain(closed.effects), [
    {
      tag: 'record',
      record: { tag: 'closed-unpaid', result: 'cancelled', code: 993, detail: 'vend request ended before payment' },
    },
  ]);
});

test('after payment: a failed vend voids with 3, a consumer cancel with 2, a dropped request with its cause', () => {
  const paidState = run([generated, { tag: 'poll-due', nowMs: 1 }, paid]).state;
  assert.deepEqual(plain(step(paidState, { tag: 'vend-result', outcome: 'failed' }).effects), [
    { tag: 'void', paymentInfo: `PI:${PI}`, reason: { reasonCode: 3, reasonText: 'vend failed' } },
    { tag: 'show', screen: { kind: 'declined', reason: 'vend-failed-reversed', code: null } },
  ]);
  assert.deepEqual(plain(step(paidState, { tag: 'vend-result', outcome: 'cancelled' }).effects), [
    {
      tag: 'void',
      paymentInfo: `PI:${PI}`,
      reason: { reasonCode: 2, reasonText: 'cancelled by consumer after payment' },
    },
    { tag: 'show', screen: { kind: 'declined', reason: 'cancelled-reversed', code: null } },
  ]);
  assert.deepEqual(plain(step(paidState, { tag: 'request-ended', reason: 'vmc reset', byConsumer: false }).effects), [
    {
      tag: 'void',
      paymentInfo: `PI:${PI}`,
      reason: { reasonCode: 3, reasonText: 'vend request ended after payment: vmc reset' },
    },
    { tag: 'show', screen: { kind: 'declined', reason: 'cancelled-reversed', code: null } },
  ]);
  assert.deepEqual(step(paidState, { tag: 'poll-due', nowMs: 5 }), { state: paidState, effects: [] });
});

test(
  'inquiry verdicts: pending and timed-out decide only on the ' +
    'last poll; retryable codes and transport are unknown',
  () => {
    const d = (code: number) => ({ kind: 'declined' as const, code, message: null, response: {}, elapsedMs: 1 });
    assert.equal(inquiryVerdict(d(993), false), 'pending');
    assert.equal(inquiryVerdict(d(993), true), 'unpaid');
    assert.equal(inquiryVerdict(d(992), false), 'unknown');
    assert.equal(inquiryVerdict(d(992), true), 'unpaid');
    for (const code of [6, 30, 999]) assert.equal(inquiryVerdict(d(code), true), 'unknown', String(code));
    assert.equal(inquiryVerdict(d(5), false), 'unpaid');
    assert.equal(
      inquiryVerdict({ kind: 'transport', failure: 'timeout', detail: '', httpStatus: null, elapsedMs: 1 }, true),
      'unknown',
    );
  },
);

test('the PaymentInfo composed from the QR before any approval carries its ids and the amount', () => {
  assert.deepEqual(JSON.parse(paymentInfoFromQr(qr, 0.29, 2).text), { SrvTranId: 'S9', RRN: 'RRN9', AuthAmount: 0.29 });
  assert.deepEqual(JSON.parse(paymentInfoFromQr({ ...qr, rrn: null, srvTranId: null }, 0.29, 2).text), {
    AuthAmount: 0.29,
  });
});

const lastPoll = (nowMs = 9_500) => [generated, { tag: 'poll-due', nowMs } as DynamicQrInput];
const declinedWith = (code: number): DynamicQrInput => ({
  tag: 'inquired',
  outcome: { kind: 'declined', code, message: null, response: {}, elapsedMs: 1 },
});
const unanswered: DynamicQrInput = {
  tag: 'inquired',
  outcome: { kind: 'transport', failure: 'timeout', detail: 'x', httpStatus: null, elapsedMs: 1 },
};

test('a final decline on the last poll is declined, not expired; pending on the last poll is expired', () => {
  const declined = run([...lastPoll(), declinedWith(5)]);
  assert.deepEqual(declined.state, { tag: 'closed', ctx, result: 'declined' });
  assert.deepEqual(declined.last, [
    {
      tag: 'record',
      record: { tag: 'closed-unpaid', result: 'declined', code: 5, detail: 'payment declined (code 5)' },
    },
    { tag: 'main', message: { type: 'vend.deny', requestId: 'rq-9', reason: 'payment declined (code 5)' } },
    { tag: 'show', screen: { kind: 'declined', reason: 'declined', code: 5 } },
  ]);
  const expired = run([...lastPoll(), pending]);
  assert.deepEqual(expired.state, { tag: 'closed', ctx, result: 'expired' });
  assert.deepEqual(expired.last.at(-1), { tag: 'show', screen: { kind: 'declined', reason: 'timed-out', code: 993 } });
});

test('insufficient funds (1) says so on the screen', () => {
  const { last } = run([generated, { tag: 'poll-due', nowMs: 1 }, declinedWith(1)]);
  assert.deepEqual(last.at(-1), { tag: 'show', screen: { kind: 'declined', reason: 'insufficient-funds', code: 1 } });
});

test('the last poll unanswered: Void with IsGatewayTimeout, reason 3, the vend denied, code null on screen', () => {
  const { state, last } = run([...lastPoll(), unanswered]);
  const reasonText = 'payment outcome unknown: the last Inquiry brought no verdict';
  assert.deepEqual(last, [
    { tag: 'void', paymentInfo: 'PI:{"IsGatewayTimeout":true}', reason: { reasonCode: 3, reasonText } },
    { tag: 'main', message: { type: 'vend.deny', requestId: 'rq-9', reason: reasonText } },
    { tag: 'show', screen: { kind: 'declined', reason: 'timed-out', code: null } },
  ]);
  assert.deepEqual(state, { tag: 'closed', ctx, result: 'voided' });
});

test('the request ended during a poll, the last poll unanswered: Void with the cause, nothing denied', () => {
  const { state, steps, last } = run([
    generated,
    { tag: 'poll-due', nowMs: 1 },
    { tag: 'request-ended', reason: 'cancel pressed', byConsumer: true },
    pending,
    unanswered,
  ]);
  assert.deepEqual(steps[2], [], 'the answer in flight is awaited');
  assert.deepEqual(steps[3], [{ tag: 'inquire', attempt: 2, isLast: true, qr }]);
  assert.deepEqual(last, [
    {
      tag: 'void',
      paymentInfo: 'PI:{"IsGatewayTimeout":true}',
      reason: { reasonCode: 2, reasonText: 'vend request ended, payment outcome unknown: cancel pressed' },
    },
    { tag: 'show', screen: { kind: 'declined', reason: 'cancelled', code: null } },
  ]);
  assert.deepEqual(state, { tag: 'closed', ctx, result: 'voided' });
});

test('paid a negative AuthAmount: short, told as "paid less"', () => {
  const neg = '{"SrvTranId":"S9","AuthAmount":-1}';
  const { last } = run([
    generated,
    { tag: 'poll-due', nowMs: 1 },
    { tag: 'inquired', outcome: { kind: 'approved', response: {}, bodyText: `{"PaymentInfo":${neg}}`, elapsedMs: 1 } },
  ]);
  assert.deepEqual(last[2], {
    tag: 'void',
    paymentInfo: `PI:${neg}`,
    reason: { reasonCode: 3, reasonText: 'amount paid below price: paid less, price 0.29' },
  });
});
