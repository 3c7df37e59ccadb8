import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  step,
  initialState,
  GATEWAY_TIMEOUT_PAYMENT_INFO,
  type DynamicQrContext,
  type DynamicQrEffect,
  type DynamicQrInput,
  type DynamicQrState,
} from '../../../src/flows/dynamic-qr/machine.js';

const ctx: DynamicQrContext = {
  requestId: 'r1',
  txId: 'TX-DYN-0001',
  amount: 1.5,
  item: 12,
  deadlineMs: 10_000,
  expiresAtWallMs: 10_000,
  pollIntervalMs: 1_000,
  currencyCode: 'EUR',
  decimalPlaces: 2,
};

const generatedOk: DynamicQrInput = {
  tag: 'generated',
  outcome: {
    kind: 'approved',
    response: { QRCode: 'https://pay.example/q/1', QRData: { RRN: 'RRN1', SrvTranId: 'S1', ChannelId: 'C' } },
    elapsedMs: 5,
  },
};
const pending: DynamicQrInput = {
  tag: 'inquired',
  outcome: { kind: 'declined', code: 993, message: 'pending', response: {}, elapsedMs: 3 },
};
/** The approving answer as the gateway wrote it: the Void must carry this PaymentInfo text unchanged. */
const PAID_PI = '{"SrvTranId":"S1","RRN":"RRN1","AuthAmount":1.50,"AuthCode":"A1"}';
const paidWith = (pi: string): DynamicQrInput => ({
  tag: 'inquired',
  outcome: {
    kind: 'approved',
    response: { PaymentInfo: JSON.parse(pi) },
    bodyText: `{"PaymentInfo":${pi},"Status":{"Verdict":"Approved"}}`,
    elapsedMs: 3,
  },
});
const paid = paidWith(PAID_PI);
const unanswered: DynamicQrInput = {
  tag: 'inquired',
  outcome: { kind: 'transport', failure: 'timeout', detail: 'timeout', httpStatus: null, elapsedMs: 8000 },
};
const declined5: DynamicQrInput = {
  tag: 'inquired',
  outcome: { kind: 'declined', code: 5, message: 'fraud', response: {}, elapsedMs: 3 },
};

function run(
  inputs: DynamicQrInput[],
  from: DynamicQrState = initialState(ctx),
): { state: DynamicQrState; effects: DynamicQrEffect[] } {
  let state = from;
  const effects: DynamicQrEffect[] = [];
  for (const input of inputs) {
    const t = step(state, input);
    state = t.state;
    effects.push(...t.effects);
  }
  return { state, effects };
}

const tags = (effects: DynamicQrEffect[]) =>
  effects.map((e) =>
    e.tag === 'main' ? `main:${e.message.type}` : e.tag === 'record' ? `record:${e.record.tag}` : e.tag,
  );

test('issued QR is shown with the amount and a poll is scheduled', () => {
  const { state, effects } = run([generatedOk]);
  assert.equal(state.tag, 'polling');
  assert.deepEqual(tags(effects), ['record:qr-issued', 'show', 'schedule-poll']);
  const show = effects.find((e) => e.tag === 'show');
  assert.ok(
    show &&
      show.tag === 'show' &&
      show.screen.kind === 'dynamic-qr' &&
      show.screen.qrText === 'https://pay.example/q/1' &&
      show.screen.amount === 1.5,
  );
});

test('pending answers keep polling with an increasing attempt counter; approval approves the vend', () => {
  const { state, effects } = run([
    generatedOk,
    { tag: 'poll-due', nowMs: 1000 },
    pending,
    { tag: 'poll-due', nowMs: 2000 },
    paid,
  ]);
  assert.equal(state.tag, 'paid');
  const inquiries = effects.filter((e) => e.tag === 'inquire');
  assert.deepEqual(
    inquiries.map((e) => e.tag === 'inquire' && [e.attempt, e.isLast]),
    [
      [1, false],
      [2, false],
    ],
  );
  const approve = effects.find((e) => e.tag === 'main' && e.message.type === 'vend.approve');
  assert.deepEqual(approve, {
    tag: 'main',
    message: { type: 'vend.approve', requestId: 'r1', txId: 'TX-DYN-0001', amount: 1.5 },
  });
});

// MDB 4.2 7.4.7: a reset between VEND APPROVED and VEND SUCCESS is a VEND SUCCESS: the sale stands.
for (const outcome of ['success', 'reset'] as const) {
  test(`vend ${outcome} after payment closes the sale with nothing to send (no Void)`, () => {
    const { state, effects } = run([
      generatedOk,
      { tag: 'poll-due', nowMs: 1000 },
      paid,
      { tag: 'vend-result', outcome },
    ]);
    assert.deepEqual(state.tag === 'closed' && state.result, 'vended');
    assert.ok(!effects.some((e) => e.tag === 'void'));
    assert.ok(effects.some((e) => e.tag === 'record' && e.record.tag === 'vended'));
    const thanks = effects.filter((e) => e.tag === 'show').at(-1);
    assert.equal(thanks?.tag === 'show' && thanks.screen.kind, 'thank-you');
  });
}

for (const outcome of ['failed', 'cancelled', 'timeout', 'expired'] as const) {
  test(
    `vend ${outcome} after payment voids with the approving ` +
      `PaymentInfo, reason ${outcome === 'cancelled' ? 2 : 3}`,
    () => {
      const { state, effects } = run([
        generatedOk,
        { tag: 'poll-due', nowMs: 1000 },
        paid,
        { tag: 'vend-result', outcome },
      ]);
      assert.deepEqual(state.tag === 'closed' && state.result, 'voided');
      const v = effects.find((e) => e.tag === 'void');
      assert.ok(v && v.tag === 'void');
      assert.equal(v.paymentInfo.text, PAID_PI);
      assert.equal(v.reason.reasonCode, outcome === 'cancelled' ? 2 : 3);
    },
  );
}

test('approved below the price (0.50 of 1.50): vend denied, Void reason 3 with the approving PaymentInfo', () => {
  const short = '{"SrvTranId":"S1","RRN":"RRN1","AuthAmount":0.50,"AuthCode":"A1"}';
  const { state, effects } = run([generatedOk, { tag: 'poll-due', nowMs: 1000 }, paidWith(short)]);
  assert.equal(state.tag === 'closed' && state.result, 'voided');
  assert.deepEqual(
    effects.find((e) => e.tag === 'main' && e.message.type.startsWith('vend.')),
    {
      tag: 'main',
      message: { type: 'vend.deny', requestId: 'r1', reason: 'amount paid below price: paid 0.50, price 1.50' },
    },
  );
  assert.equal(
    effects.some((e) => e.tag === 'main' && e.message.type === 'vend.approve'),
    false,
  );
  const v = effects.find((e) => e.tag === 'void');
  assert.ok(v && v.tag === 'void');
  assert.equal(v.paymentInfo.text, short);
  assert.deepEqual(v.reason, { reasonCode: 3, reasonText: 'amount paid below price: paid 0.50, price 1.50' });
  assert.deepEqual(
    effects.find((e) => e.tag === 'record' && e.record.tag === 'paid'),
    { tag: 'record', record: { tag: 'paid', paymentInfo: v.paymentInfo, paidMinor: 50 } },
  );
});

test('one cent short is short, exactly: 1.49 and 1.499 deny; 1.50, 1.500 and more approve', () => {
  for (const [amount, approved] of [
    ['1.49', false],
    ['1.499', false],
    ['1.4999999999999999', false],
    ['1.50', true],
    ['1.500', true],
    ['2.00', true],
    ['15e-1', true],
  ] as const) {
    const { state } = run([
      generatedOk,
      { tag: 'poll-due', nowMs: 1000 },
      paidWith(`{"SrvTranId":"S1","AuthAmount":${amount}}`),
    ]);
    assert.equal(state.tag, approved ? 'paid' : 'closed', `AuthAmount ${amount}`);
  }
});

test(
  'paid in another currency than asked (a refused approval): the ' +
    'vend is denied and the payment voided with its own PaymentInfo',
  () => {
    const foreign = '{"SrvTranId":"S1","AuthAmount":1.50}';
    const refused: DynamicQrInput = {
      tag: 'inquired',
      outcome: {
        kind: 'declined',
        code: 8,
        message: 'answer in another currency',
        response: {},
        elapsedMs: 3,
        bodyText: `{"PaymentInfo":${foreign},"Status":{"Status":"Approved"}}`,
        heldFunds: true,
      },
    };
    const { state, effects } = run([generatedOk, { tag: 'poll-due', nowMs: 1000 }, refused]);
    assert.equal(state.tag === 'closed' && state.result, 'voided');
    assert.ok(
      effects.some((e) => e.tag === 'main' && e.message.type === 'vend.deny'),
      'the vend is denied',
    );
    assert.equal(
      effects.some((e) => e.tag === 'main' && e.message.type === 'vend.approve'),
      false,
    );
    const v = effects.find((e) => e.tag === 'void');
    assert.ok(v && v.tag === 'void');
    assert.equal(v.paymentInfo.text, foreign, 'the Void carries the PaymentInfo the gateway sent');
    assert.deepEqual(v.reason, { reasonCode: 3, reasonText: 'paid in another currency than asked' });
  },
);

test('paid above the price: the vend is approved and what was paid is recorded', () => {
  const { state, effects } = run([
    generatedOk,
    { tag: 'poll-due', nowMs: 1000 },
    paidWith('{"SrvTranId":"S1","AuthAmount":2.00}'),
  ]);
  assert.equal(state.tag, 'paid');
  assert.ok(effects.some((e) => e.tag === 'record' && e.record.tag === 'paid' && e.record.paidMinor === 200));
  assert.ok(effects.some((e) => e.tag === 'main' && e.message.type === 'vend.approve'));
});

test('consumer cancel after payment voids with reason 2', () => {
  const { effects } = run([
    generatedOk,
    { tag: 'poll-due', nowMs: 1000 },
    paid,
    { tag: 'vend-result', outcome: 'cancelled' },
  ]);
  const v = effects.find((e) => e.tag === 'void');
  assert.ok(v && v.tag === 'void' && v.reason.reasonCode === 2);
});

test('a final decline denies the vend and owes nothing', () => {
  const { state, effects } = run([generatedOk, { tag: 'poll-due', nowMs: 1000 }, declined5]);
  assert.deepEqual(state.tag === 'closed' && state.result, 'declined');
  assert.ok(effects.some((e) => e.tag === 'main' && e.message.type === 'vend.deny'));
  assert.ok(!effects.some((e) => e.tag === 'void'));
});

test('the poll that would cross the deadline is flagged last; pending then expires with nothing owed', () => {
  const { state, effects } = run([generatedOk, { tag: 'poll-due', nowMs: 9_500 }, pending]);
  const inquire = effects.find((e) => e.tag === 'inquire');
  assert.ok(inquire && inquire.tag === 'inquire' && inquire.isLast);
  assert.deepEqual(state.tag === 'closed' && state.result, 'expired');
  assert.ok(effects.some((e) => e.tag === 'main' && e.message.type === 'vend.deny'));
  assert.ok(!effects.some((e) => e.tag === 'void'));
});

test('an unanswered last poll is an unknown outcome: Void with IsGatewayTimeout and deny', () => {
  const { state, effects } = run([generatedOk, { tag: 'poll-due', nowMs: 9_500 }, unanswered]);
  assert.deepEqual(state.tag === 'closed' && state.result, 'voided');
  const v = effects.find((e) => e.tag === 'void');
  assert.ok(v && v.tag === 'void');
  assert.deepEqual(v.paymentInfo, GATEWAY_TIMEOUT_PAYMENT_INFO);
  assert.ok(effects.some((e) => e.tag === 'main' && e.message.type === 'vend.deny'));
});

test('an unanswered poll before the deadline just polls again', () => {
  const { state, effects } = run([generatedOk, { tag: 'poll-due', nowMs: 1000 }, unanswered]);
  assert.equal(state.tag, 'polling');
  assert.equal(effects.at(-1)?.tag, 'schedule-poll');
});

test('GenerateQR declined or unanswered: deny, nothing owed', () => {
  for (const outcome of [
    { kind: 'declined', code: 6, message: null, response: {}, elapsedMs: 1 },
    { kind: 'transport', failure: 'reset', detail: 'ECONNRESET', httpStatus: null, elapsedMs: 1 },
  ] as const) {
    const { state, effects } = run([{ tag: 'generated', outcome }]);
    assert.deepEqual(state.tag === 'closed' && state.result, 'not-issued');
    assert.deepEqual(tags(effects), ['record:closed-unpaid', 'main:vend.deny', 'show']);
  }
});

test('request ended while generating: the QR is never shown and nothing is owed', () => {
  const { state, effects } = run([{ tag: 'request-ended', reason: 'cancel', byConsumer: true }, generatedOk]);
  assert.deepEqual(state.tag === 'closed' && state.result, 'cancelled');
  assert.ok(!effects.some((e) => e.tag === 'show' || e.tag === 'void' || e.tag === 'main'));
});

test('request ended while polling: one last poll decides (paid -> Void reason 2)', () => {
  const { state, effects } = run([
    generatedOk,
    { tag: 'request-ended', reason: 'consumer cancel', byConsumer: true },
    paid,
  ]);
  const inquire = effects.find((e) => e.tag === 'inquire');
  assert.ok(inquire && inquire.tag === 'inquire' && inquire.isLast);
  assert.deepEqual(state.tag === 'closed' && state.result, 'voided');
  const v = effects.find((e) => e.tag === 'void');
  assert.ok(v && v.tag === 'void' && v.reason.reasonCode === 2);
  assert.ok(
    !effects.some((e) => e.tag === 'main' && e.message.type === 'vend.approve'),
    'never approve a vend the VMC dropped',
  );
});

test('request ended while polling: last poll pending -> closed, nothing owed', () => {
  const { state, effects } = run([
    generatedOk,
    { tag: 'request-ended', reason: 'consumer cancel', byConsumer: true },
    pending,
  ]);
  assert.deepEqual(state.tag === 'closed' && state.result, 'cancelled');
  assert.ok(!effects.some((e) => e.tag === 'void'));
});

test('request ended during an in-flight poll: a pending answer triggers the last poll', () => {
  const { state, effects } = run([
    generatedOk,
    { tag: 'poll-due', nowMs: 1000 },
    { tag: 'request-ended', reason: 'x', byConsumer: false },
    pending,
    unanswered,
  ]);
  const inquiries = effects.filter((e) => e.tag === 'inquire');
  assert.deepEqual(
    inquiries.map((e) => e.tag === 'inquire' && e.isLast),
    [false, true],
  );
  assert.deepEqual(state.tag === 'closed' && state.result, 'voided');
});

test('closed swallows every further input', () => {
  const closed = run([generatedOk, { tag: 'poll-due', nowMs: 1000 }, declined5]).state;
  for (const input of [
    generatedOk,
    pending,
    paid,
    { tag: 'poll-due', nowMs: 1 } as const,
    { tag: 'vend-result', outcome: 'success' } as const,
    { tag: 'request-ended', reason: 'x', byConsumer: false } as const,
  ]) {
    const t = step(closed, input);
    assert.equal(t.state, closed);
    assert.deepEqual(t.effects, []);
  }
});

test('inputs that do not belong to a state are ignored without effects', () => {
  const s0 = initialState(ctx);
  assert.deepEqual(step(s0, pending).effects, []);
  assert.deepEqual(step(s0, { tag: 'vend-result', outcome: 'success' }).effects, []);
  const polling = run([generatedOk]).state;
  assert.deepEqual(step(polling, { tag: 'vend-result', outcome: 'success' }).effects, []);
  const inFlight = run([generatedOk, { tag: 'poll-due', nowMs: 1000 }]).state;
  assert.deepEqual(step(inFlight, { tag: 'poll-due', nowMs: 2000 }).effects, [], 'never two Inquiries in flight');
});

test('992 on the last poll (the gateway closed the unpaid QR) expires the payment: deny, nothing owed', () => {
  const timedOut: DynamicQrInput = {
    tag: 'inquired',
    outcome: { kind: 'declined', code: 992, message: 'expired', response: {}, elapsedMs: 3 },
  };
  const { state, effects } = run([generatedOk, { tag: 'poll-due', nowMs: 9_500 }, timedOut]);
  assert.deepEqual(state.tag === 'closed' && state.result, 'expired');
  assert.ok(effects.some((e) => e.tag === 'main' && e.message.type === 'vend.deny'));
  assert.ok(!effects.some((e) => e.tag === 'void'));
  const shown = effects.filter((e) => e.tag === 'show').at(-1);
  assert.ok(shown && shown.tag === 'show' && shown.screen.kind === 'declined' && shown.screen.reason === 'timed-out');
});

for (const code of [6, 30, 992, 999]) {
  test(`Inquiry declined ${code} before the last poll is no verdict: keep polling, never deny`, () => {
    const retry: DynamicQrInput = {
      tag: 'inquired',
      outcome: { kind: 'declined', code, message: 'try again', response: {}, elapsedMs: 3 },
    };
    const { state, effects } = run([
      generatedOk,
      { tag: 'poll-due', nowMs: 1000 },
      retry,
      { tag: 'poll-due', nowMs: 2000 },
      paid,
    ]);
    assert.equal(state.tag, 'paid', 'the consumer paid between the polls: the vend is approved');
    assert.ok(!effects.some((e) => e.tag === 'main' && e.message.type === 'vend.deny'));
    assert.ok(!effects.some((e) => e.tag === 'record' && e.record.tag === 'closed-unpaid'));
  });
}

for (const code of [6, 30, 999]) {
  test(`Inquiry declined ${code} on the last poll is an unknown outcome: Void with IsGatewayTimeout, deny`, () => {
    const retry: DynamicQrInput = {
      tag: 'inquired',
      outcome: { kind: 'declined', code, message: 'try again', response: {}, elapsedMs: 3 },
    };
    const { state, effects } = run([generatedOk, { tag: 'poll-due', nowMs: 9_500 }, retry]);
    assert.deepEqual(state.tag === 'closed' && state.result, 'voided');
    const v = effects.find((e) => e.tag === 'void');
    assert.ok(v && v.tag === 'void');
    assert.deepEqual(v.paymentInfo, GATEWAY_TIMEOUT_PAYMENT_INFO);
    assert.equal(v.reason.reasonCode, 3);
    assert.ok(effects.some((e) => e.tag === 'main' && e.message.type === 'vend.deny'));
  });
}

test('a machine cause (deadline, reset, shutdown) voids with ReasonCode 3, a consumer cancel with 2', () => {
  for (const [byConsumer, expected] of [
    [true, 2],
    [false, 3],
  ] as const) {
    const afterPayment = run([
      generatedOk,
      { tag: 'poll-due', nowMs: 1000 },
      paid,
      { tag: 'request-ended', reason: 'r', byConsumer },
    ]);
    const v1 = afterPayment.effects.find((e) => e.tag === 'void');
    assert.ok(v1 && v1.tag === 'void' && v1.reason.reasonCode === expected, `after payment, byConsumer=${byConsumer}`);
    const whilePolling = run([generatedOk, { tag: 'request-ended', reason: 'r', byConsumer }, paid]);
    const v2 = whilePolling.effects.find((e) => e.tag === 'void');
    assert.ok(v2 && v2.tag === 'void' && v2.reason.reasonCode === expected, `while polling, byConsumer=${byConsumer}`);
  }
});
