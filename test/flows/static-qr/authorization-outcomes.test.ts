/**
 * What the Static QR flow does with each answer to its Authorization, on a real SQLite ledger
 * with the gateway played by a stub: the funds offered to the machine (never more than asked,
 * never more than approved), a foreign-currency approval cancelled at once (machine cause), a
 * decline closed with nothing owed, no answer cancelled with IsGatewayTimeout. And the Cancel
 * reason of a session that sold nothing: 2 when the consumer chose it, 3 when the machine did.
 */
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config/load.js';
import { silentLogger } from '../../../src/core/log.js';
import { createRequestBuilders } from '../../../src/gateway/envelope.js';
import type { GatewayOutcome } from '../../../src/gateway/outcome.js';
import { openLedger, type Ledger } from '../../../src/ledger/index.js';
import { readOutbox } from '../../../src/ledger/admin.js';
import { outboxBodies } from '../../../src/flows/bodies.js';
import { realTimers, type FlowContext } from '../../../src/flows/context.js';
import { cancelReasonCode, StaticQrFlow } from '../../../src/flows/static-qr/flow.js';
import { StartDeclined } from '../../../src/start/index.js';
import type { PaymentToMain, Screen } from '../../../src/ipc/messages.js';
import type { StartRequest } from '../../../src/gateway/protocol/index.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const { config } = loadConfig({ env: {} });
const TX = 'STATIC-AUTH-0001';
const T = { timeout: TEST_DEADLINE_MS };

let dir: string;
let ledger: Ledger;
let sent: PaymentToMain[];
let shown: Screen[];
let flow: StaticQrFlow;
/** The next Authorization's answer. */
let answer: GatewayOutcome<unknown>;
let authorized: Promise<void>;
/** Authorization requests sent. */
let authorizations: number;
/** outboxChanged() calls: the drainer is woken for each request written. */
let wakes: number;
/** Alarms raised (detail) or cleared (null) through the context. */
let alarms: Array<[string, boolean, string | null]>;

function approvedWith(paymentInfo: string): GatewayOutcome<unknown> {
  const bodyText = `{"PaymentInfo":${paymentInfo},"Status":{"Verdict":"Approved"}}`;
  return { kind: 'approved', response: JSON.parse(bodyText), bodyText, elapsedMs: 1 };
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'qrvend-auth-outcomes-'));
  ledger = openLedger({ path: join(dir, 'ledger.sqlite'), decimalPlaces: 2 });
  sent = [];
  shown = [];
  authorizations = 0;
  wakes = 0;
  alarms = [];
  const builders = createRequestBuilders(config, { hwSerial: 'HW', fwVersion: 'test', type: 'qrvend' });
  let done: () => void;
  authorized = new Promise((resolve) => (done = resolve));
  const ctx: FlowContext = {
    ledger,
    gateway: {
      authorization: async () => (authorizations++, setImmediate(done), answer),
      generateQR: async () => assert.fail('no GenerateQR in a static session'),
      inquiry: async () => assert.fail('no Inquiry in a static session'),
    } as unknown as FlowContext['gateway'],
    builders: () => builders,
    bodies: outboxBodies(() => builders, { preauthAmount: 5, decimalPlaces: 2 }),
    toMain: (m) => sent.push(m),
    show: (screen) => shown.push(screen),
    outboxChanged: () => void wakes++,
    settings: {
      preauthAmount: 5,
      decimalPlaces: 2,
      currencyCode: 'EUR',
      paymentTimeoutMs: 10_000,
      pollIntervalMs: 1000,
      uniQr: 'U',
      staticAgeLimit: null,
      readerGraceMs: 30_000,
    },
    log: silentLogger(),
    now: Date.now,
    timers: realTimers,
    alarm: (code, active, detail) => void alarms.push([code, active, detail]),
  };
  flow = new StaticQrFlow(ctx);
});

afterEach(() => {
  ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

async function startWith(outcome: GatewayOutcome<unknown>, balance?: number): Promise<void> {
  answer = outcome;
  const start = {
    AppUserId: 'user-1',
    SecretToken: '*'.repeat(64),
    TerminalId: 'T1',
    TransactionId: TX,
    ...(balance === undefined ? {} : { Balance: balance }),
  };
  await flow.accept(start as StartRequest);
  await authorized;
}

function outboxRows(): Array<{ op: string; body: Record<string, any> }> {
  return readOutbox(join(dir, 'ledger.sqlite'), { limit: 10 })
    .rows.filter((r) => r.txId === TX)
    .map((r) => ({ op: r.op, body: JSON.parse(r.body) }));
}

function fundsOffered(): number | undefined {
  const begin = sent.find((m) => m.type === 'session.begin');
  return begin?.type === 'session.begin' ? begin.funds : undefined;
}

test('approved for less than asked: the machine is offered what was approved, to the cent', T, async () => {
  await startWith(approvedWith('{"SrvTranId":"S1","AuthAmount":3.15}'));
  assert.equal(fundsOffered(), 3.15);
  assert.deepEqual(shown.at(-1), { kind: 'session', amount: 3.15, currencyCode: 'EUR', decimalPlaces: 2 });
  assert.equal(ledger.getTransaction(TX)?.state, 'authorized');
});

test('approved for more than asked, or with no AuthAmount: the machine is offered what was asked', T, async () => {
  await startWith(approvedWith('{"SrvTranId":"S1","AuthAmount":7.29}'), 4.35);
  assert.equal(fundsOffered(), 4.35);
});

test('approved with no AuthAmount: the amount asked', T, async () => {
  await startWith(approvedWith('{"SrvTranId":"S1"}'));
  assert.equal(fundsOffered(), 5);
});

test(
  'approved in another currency: no session, a Cancel (machine cause) with the PaymentInfo as received',
  T,
  async () => {
    const bodyText = '{"PaymentInfo":{"SrvTranId":"S9","AuthAmount":5},"Status":{"Verdict":"Declined"}}';
    await startWith({
      kind: 'declined',
      code: 95,
      message: 'currency USD, asked EUR',
      response: JSON.parse(bodyText),
      bodyText,
      elapsedMs: 1,
      heldFunds: true,
    });
    assert.equal(fundsOffered(), undefined, 'no session is opened');
    assert.equal(ledger.getTransaction(TX)?.state, 'cancelling');
    const rows = outboxRows();
    assert.deepEqual(
      rows.map((r) => r.op),
      ['Cancel'],
    );
    assert.equal(rows[0]!.body.ReasonCode, 3);
    assert.equal(rows[0]!.body.ReasonText, 'currency USD, asked EUR');
    assert.deepEqual(rows[0]!.body.PaymentInfo, { SrvTranId: 'S9', AuthAmount: 5 });
    assert.deepEqual(shown.at(-1), { kind: 'declined', reason: 'declined', code: 95 });
    assert.equal(wakes, 1, 'the drainer is woken for the Cancel');
    assert.equal(flow.activeTxId, null, 'the slot is free');
  },
);

test(
  "approved in another currency, asked for less than the pre-auth: the Cancel releases the Authorization's " +
    'Amount; the alarm names the currencies',
  T,
  async () => {
    const bodyText = '{"PaymentInfo":{"SrvTranId":"S9","AuthAmount":4.35},"Status":{"Verdict":"Approved"}}';
    const currencies = { asked: 'EUR/978', answered: 'USD/840' };
    const message = 'answer in another currency (USD/840) than asked (EUR/978)';
    const response = JSON.parse(bodyText) as unknown;
    await startWith(
      { kind: 'declined', code: 8, message, response, bodyText, elapsedMs: 1, heldFunds: true, currencies },
      4.35,
    );
    const rows = outboxRows();
    assert.deepEqual(
      rows.map((r) => r.op),
      ['Cancel'],
    );
    assert.equal(rows[0]!.body.BasicInfo.Amount, 4.35, 'the hold as the Authorization asked it, not the funds (none)');
    assert.equal(rows[0]!.body.BasicInfo.CurrencyCode, config.machine.currencyCode);
    assert.equal(alarms.length, 1);
    const [code, active, detail] = alarms[0]!;
    assert.deepEqual([code, active], ['GATEWAY_CURRENCY_MISMATCH', true]);
    assert.match(detail ?? '', new RegExp(`${TX} in USD/840 when EUR/978 was asked.*code 8`));
  },
);

test('approved in the currency asked: the currency alarm is cleared', T, async () => {
  await startWith(approvedWith('{"SrvTranId":"S1","AuthAmount":5}'));
  assert.deepEqual(alarms, [['GATEWAY_CURRENCY_MISMATCH', false, null]]);
});

test('another currency without a message or PaymentInfo: the Cancel still goes, with a reason text', T, async () => {
  await startWith({ kind: 'declined', code: 95, message: null, response: {}, elapsedMs: 1, heldFunds: true });
  const rows = outboxRows();
  assert.deepEqual(
    rows.map((r) => r.op),
    ['Cancel'],
  );
  assert.equal(rows[0]!.body.ReasonText, 'approved in another currency');
  assert.deepEqual(rows[0]!.body.PaymentInfo, {});
});

test('declined: closed as declined, nothing owed; insufficient funds says so on the screen', T, async () => {
  await startWith({ kind: 'declined', code: 1, message: 'no money', response: {}, elapsedMs: 1 });
  assert.equal(ledger.getTransaction(TX)?.state, 'declined');
  assert.deepEqual(outboxRows(), []);
  assert.equal(fundsOffered(), undefined);
  assert.deepEqual(shown.at(-1), { kind: 'declined', reason: 'insufficient-funds', code: 1 });
  assert.equal(flow.activeTxId, null);
});

test('declined with another code: the plain declined screen', T, async () => {
  await startWith({ kind: 'declined', code: 5, message: null, response: {}, elapsedMs: 1 });
  assert.equal(ledger.getTransaction(TX)?.state, 'declined');
  assert.deepEqual(shown.at(-1), { kind: 'declined', reason: 'declined', code: 5 });
});

test('no answer: a Cancel with IsGatewayTimeout for the amount asked, reason 3', T, async () => {
  await startWith({ kind: 'transport', failure: 'timeout', detail: 'no answer', httpStatus: null, elapsedMs: 1 }, 1.15);
  assert.equal(ledger.getTransaction(TX)?.state, 'cancelling');
  const rows = outboxRows();
  assert.deepEqual(
    rows.map((r) => r.op),
    ['Cancel'],
  );
  assert.deepEqual(rows[0]!.body.PaymentInfo, { IsGatewayTimeout: true });
  assert.equal(rows[0]!.body.ReasonCode, 3);
  assert.equal(rows[0]!.body.BasicInfo.Amount, 1.15);
  assert.deepEqual(shown.at(-1), { kind: 'declined', reason: 'no-answer', code: null });
  assert.equal(wakes, 1, 'the drainer is woken for the Cancel');
  assert.equal(flow.activeTxId, null);
});

test('the reader refused the session: a Cancel, machine cause, naming the refusal', T, async () => {
  await startWith(approvedWith('{"SrvTranId":"S1","AuthAmount":5}'));
  flow.handle({ type: 'session.refused', txId: TX, reason: 'the VMC has disabled the reader' });
  const rows = outboxRows();
  assert.deepEqual(
    rows.map((r) => r.op),
    ['Cancel'],
  );
  assert.equal(rows[0]!.body.ReasonCode, 3);
  assert.equal(rows[0]!.body.ReasonText, 'reader refused the session: the VMC has disabled the reader');
  assert.equal(flow.activeTxId, null);
});

test('Cancel reason: 2 when the consumer ended a session with no vend, 3 for everything the machine did', () => {
  assert.equal(cancelReasonCode('consumer-cancel', 0), 2);
  assert.equal(cancelReasonCode('consumer-cancel', 1), 2);
  assert.equal(cancelReasonCode('complete', 0), 2);
  assert.equal(cancelReasonCode('complete', 1), 3, 'a vend was approved but not dispensed');
  for (const reason of ['reader-cancel', 'idle-timeout', 'vmc-reset', 'disabled', 'link-lost'] as const) {
    assert.equal(cancelReasonCode(reason, 0), 3, reason);
  }
});

test(
  'a vend denied in the session for its age limit says so on the screen; any other denial shows nothing',
  T,
  async () => {
    await startWith(approvedWith('{"SrvTranId":"S1","AuthAmount":5}'));
    flow.handle({ type: 'session.started', txId: TX, funds: 5 });
    const before = shown.length;
    flow.handle({ type: 'vend.denied', txId: TX, price: 4.35, item: 7, reason: 'over the funds', ageLimit: null });
    assert.equal(shown.length, before);
    flow.handle({ type: 'vend.denied', txId: TX, price: 4.35, item: 7, reason: 'age', ageLimit: 18 });
    assert.deepEqual(shown.slice(before), [{ kind: 'declined', reason: 'age-restricted', code: null }]);
    assert.equal(flow.activeTxId, TX, 'the session goes on');
  },
);

test(
  'a held (relayed) Start never confirmed: closed as declined 30, ' +
    'no Authorization, the slot free; another id changes nothing',
  T,
  async () => {
    answer = approvedWith('{"SrvTranId":"S1","AuthAmount":5}');
    const start = { AppUserId: 'user-1', SecretToken: '*'.repeat(64), TerminalId: 'T1', TransactionId: TX };
    await flow.accept(start as StartRequest, { held: true });
    await new Promise((r) => setImmediate(r));
    assert.equal(authorizations, 0, 'a held Start waits for its confirmation');
    flow.dropped('STATIC-AUTH-OTHER', 'not ours');
    assert.equal(flow.activeTxId, TX, 'a drop for another id leaves the held Start alone');
    flow.dropped(TX, 'relay deadline passed');
    assert.equal(ledger.getTransaction(TX)?.state, 'declined');
    assert.equal(ledger.getTransaction(TX)?.declineCode, 30);
    assert.equal(flow.activeTxId, null);
    assert.deepEqual(shown.at(-1), { kind: 'idle', qrText: 'U' });
    flow.answered(TX);
    flow.dropped(TX, 'dropped twice');
    await new Promise((r) => setImmediate(r));
    assert.equal(authorizations, 0, 'no Authorization after the drop');
  },
);

test(
  'accept: the balance recorded as sent (or none), the authorizing screen, the transaction owned while open',
  T,
  async () => {
    await startWith(approvedWith('{"SrvTranId":"S1","AuthAmount":4.35}'), 4.35);
    assert.deepEqual(ledger.getTransaction(TX)?.startData, { appUserId: 'user-1', balance: 4.35 });
    assert.deepEqual(shown[0], { kind: 'authorizing' });
    assert.equal(flow.owns(TX), true);
    assert.equal(flow.owns('STATIC-AUTH-OTHER'), false);
    flow.handle({ type: 'session.ended', txId: TX, reason: 'consumer-cancel', vendsSucceeded: 0, amountVended: 0 });
    assert.equal(flow.owns(TX), false, 'closed and written: recovery may have it');
    assert.equal(outboxRows()[0]!.body.ReasonCode, 2);
    assert.deepEqual(shown.at(-1), { kind: 'session-ended' });
    // The same TransactionId again, once the slot is free: 996, and the closed transaction untouched.
    await assert.rejects(
      flow.accept({
        AppUserId: 'user-1',
        SecretToken: '*'.repeat(64),
        TerminalId: 'T1',
        TransactionId: TX,
      } as StartRequest),
      (err) => err instanceof StartDeclined && err.declineCode === 996,
    );
    assert.equal(ledger.getTransaction(TX)?.state, 'cancelling');
    assert.equal(flow.activeTxId, null);
  },
);

test('accept without a Balance records none', T, async () => {
  await startWith(approvedWith('{"SrvTranId":"S1"}'));
  assert.deepEqual(ledger.getTransaction(TX)?.startData, { appUserId: 'user-1', balance: null });
});

test('approved with a negative AuthAmount: the machine is offered nothing, never a negative amount', T, async () => {
  await startWith(approvedWith('{"SrvTranId":"S1","AuthAmount":-1.15}'));
  assert.equal(fundsOffered(), 0);
});

test('messages for another session, or for a vend never approved, change nothing and throw nothing', T, async () => {
  await startWith(approvedWith('{"SrvTranId":"S1","AuthAmount":5}'));
  flow.handle({ type: 'session.started', txId: 'STATIC-AUTH-OTHER', funds: 5 });
  flow.handle({ type: 'vend.approved', txId: 'STATIC-AUTH-OTHER', vendSeq: 1, price: 1, item: 1 });
  flow.handle({
    type: 'vend.result',
    txId: 'STATIC-AUTH-OTHER',
    requestId: null,
    vendSeq: 1,
    outcome: 'success',
    detail: null,
  });
  flow.handle({ type: 'vend.result', txId: null, requestId: 'rq-1', vendSeq: null, outcome: 'success', detail: null });
  flow.handle({ type: 'vend.result', txId: TX, requestId: null, vendSeq: 9, outcome: 'success', detail: null });
  flow.handle({ type: 'vend.result', txId: TX, requestId: null, vendSeq: null, outcome: 'success', detail: null });
  assert.equal(ledger.getTransaction(TX)?.state, 'authorized');
  assert.deepEqual(ledger.vendsOf(TX), []);
  // A session that is not this one ends: this one keeps its slot, nothing is written.
  flow.handle({
    type: 'session.ended',
    txId: 'STATIC-AUTH-OTHER',
    reason: 'complete',
    vendsSucceeded: 0,
    amountVended: 0,
  });
  flow.handle({ type: 'session.refused', txId: 'STATIC-AUTH-OTHER', reason: 'stale' });
  assert.equal(flow.activeTxId, TX);
  assert.deepEqual(outboxRows(), []);
  // The session itself goes on: a vend approved and dispensed is settled.
  flow.handle({ type: 'session.started', txId: TX, funds: 5 });
  flow.handle({ type: 'vend.approved', txId: TX, vendSeq: 1, price: 1.15, item: 3 });
  flow.handle({ type: 'vend.result', txId: TX, requestId: null, vendSeq: 1, outcome: 'success', detail: null });
  assert.equal(ledger.getTransaction(TX)?.state, 'session_open');
  flow.handle({ type: 'session.ended', txId: TX, reason: 'complete', vendsSucceeded: 1, amountVended: 1.15 });
  assert.equal(outboxRows()[0]!.body.BasicInfo.Amount, 1.15);
  assert.deepEqual(shown.at(-1), { kind: 'thank-you', amount: 1.15, currencyCode: 'EUR', decimalPlaces: 2, txId: TX });
  // The end reported twice: one Settlement, never a second request.
  flow.handle({ type: 'session.ended', txId: TX, reason: 'complete', vendsSucceeded: 1, amountVended: 1.15 });
  assert.deepEqual(
    outboxRows().map((r) => r.op),
    ['Settlement'],
  );
  assert.equal(ledger.getTransaction(TX)?.state, 'settling');
});
