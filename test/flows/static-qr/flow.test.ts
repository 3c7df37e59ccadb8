/**
 * The Static QR flow on a real SQLite ledger, with the gateway played by a stub (unit test) and
 * ledger write failures injected by wrapping the ledger: a dispensed product must never drop out
 * of the Settlement, whatever write fails when.
 */
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config/load.js';
import { silentLogger } from '../../../src/core/log.js';
import { ErrorCodes, QrvendError } from '../../../src/core/errors.js';
import { createRequestBuilders } from '../../../src/gateway/envelope.js';
import { openLedger, type Ledger } from '../../../src/ledger/index.js';
import { readOutbox } from '../../../src/ledger/admin.js';
import { outboxBodies } from '../../../src/flows/bodies.js';
import { realTimers, type FlowContext } from '../../../src/flows/context.js';
import { ageDeniedScreen, StaticQrFlow } from '../../../src/flows/static-qr/flow.js';
import { authorizationAmount } from '../../../src/flows/amounts.js';
import { StartDeclined } from '../../../src/start/index.js';
import type { PaymentToMain, Screen } from '../../../src/ipc/messages.js';
import type { StartRequest } from '../../../src/gateway/protocol/index.js';

const TX = 'STATIC-TX-0001';
const PAYMENT_INFO = { SrvTranId: 'SRV-1', AuthAmount: 5, AuthCode: 'A1' };

interface Currency {
  decimalPlaces: number;
  currencyCode: string;
  currencyNumeric: string;
  preauthAmount: number;
}
const EUR: Currency = { decimalPlaces: 2, currencyCode: 'EUR', currencyNumeric: '978', preauthAmount: 5 };

let dir: string;
let ledger: Ledger;
/** Ledger methods that throw while their name is in here (the disk refusing writes). */
let failing: Set<string>;
let sent: PaymentToMain[];
let flow: StaticQrFlow;
let ctx: FlowContext;
/** Authorization requests the stub gateway received, and screens shown. */
let authRequests: Array<{ BasicInfo: { MachineAuTime?: string | null; AgeLimitation?: number | null } }>;
let shown: Screen[];

function failingLedger(real: Ledger): Ledger {
  return new Proxy(real, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (failing.has(String(prop)))
          throw new QrvendError(ErrorCodes.LEDGER_WRITE_FAILED, `injected: ${String(prop)} failed`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

function start(overrides: Partial<StartRequest> = {}): StartRequest {
  return {
    AppUserId: 'user-1',
    SecretToken: '*'.repeat(64),
    TerminalId: 'T1',
    TransactionId: TX,
    ...overrides,
  } as StartRequest;
}

async function waitFor<T>(find: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const found = find();
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The body the outbox will send for this operation, read back from the ledger file. */
function outboxBody(op: string): Record<string, any> {
  const row = readOutbox(join(dir, 'ledger.sqlite'), { limit: 10 }).rows.find((r) => r.txId === TX && r.op === op);
  assert.ok(row, `no ${op} in the outbox`);
  return JSON.parse(row.body);
}

/** A fresh ledger, stub gateway and flow, in euros unless told another currency. */
function setUp({ decimalPlaces, currencyCode, currencyNumeric, preauthAmount }: Currency = EUR): void {
  dir = mkdtempSync(join(tmpdir(), 'qrvend-flow-'));
  ledger = openLedger({ path: join(dir, 'ledger.sqlite'), decimalPlaces });
  failing = new Set();
  sent = [];
  const { config } = loadConfig({ env: {}, overrides: { machine: { decimalPlaces, currencyCode, currencyNumeric } } });
  const builders = createRequestBuilders(config, { hwSerial: 'HW', fwVersion: 'test', type: 'qrvend' });
  authRequests = [];
  shown = [];
  ctx = {
    ledger: failingLedger(ledger),
    gateway: {
      authorization: async (request: (typeof authRequests)[number]) => (
        authRequests.push(request),
        { kind: 'approved', response: { PaymentInfo: PAYMENT_INFO, Status: { Verdict: 'Approved' } }, elapsedMs: 1 }
      ),
      generateQR: async () => assert.fail('no GenerateQR in a static session'),
      inquiry: async () => assert.fail('no Inquiry in a static session'),
    } as unknown as FlowContext['gateway'],
    builders: () => builders,
    bodies: outboxBodies(() => builders, { preauthAmount, decimalPlaces }),
    toMain: (m) => sent.push(m),
    show: (screen) => shown.push(screen),
    outboxChanged: () => {},
    settings: {
      preauthAmount,
      decimalPlaces,
      currencyCode,
      paymentTimeoutMs: 10_000,
      pollIntervalMs: 1000,
      uniQr: 'U',
      staticAgeLimit: null,
      readerGraceMs: 30_000,
    },
    log: silentLogger(),
    now: Date.now,
    timers: realTimers,
  };
  flow = new StaticQrFlow(ctx);
}

beforeEach(() => setUp());

afterEach(() => {
  ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

async function openSession(funds = 5): Promise<void> {
  await flow.accept(start());
  await waitFor(() => sent.find((m) => m.type === 'session.begin'), 'session.begin');
  flow.handle({ type: 'session.started', txId: TX, funds });
}

test('the authorization amount is the pre-auth capped by the balance, rounded down, never above it', () => {
  assert.equal(authorizationAmount(5, undefined, 2), 5);
  assert.equal(authorizationAmount(5, 3.5, 2), 3.5);
  assert.equal(authorizationAmount(10, 4.995, 2), 4.99);
  assert.equal(authorizationAmount(10, 7.6, 0), 7);
  assert.equal(authorizationAmount(10, 0.29, 2), 0.29);
});

test('a zero balance is declined with 1 (insufficient funds), a second Start with 30 (busy)', async () => {
  await assert.rejects(
    flow.accept(start({ Balance: 0.004 })),
    (err) => err instanceof StartDeclined && err.declineCode === 1,
  );
  await flow.accept(start());
  await assert.rejects(
    flow.accept(start({ TransactionId: 'STATIC-TX-0002' })),
    (err) => err instanceof StartDeclined && err.declineCode === 30,
  );
});

test('two vends succeed: one Settlement of their sum with the Authorization PaymentInfo unchanged', async () => {
  await openSession();
  flow.handle({ type: 'vend.approved', txId: TX, vendSeq: 1, price: 1.5, item: 12 });
  flow.handle({ type: 'vend.result', txId: TX, requestId: null, vendSeq: 1, outcome: 'success', detail: null });
  flow.handle({ type: 'vend.approved', txId: TX, vendSeq: 2, price: 2, item: 7 });
  flow.handle({ type: 'vend.result', txId: TX, requestId: null, vendSeq: 2, outcome: 'success', detail: null });
  flow.handle({ type: 'session.ended', txId: TX, reason: 'complete', vendsSucceeded: 2, amountVended: 3.5 });
  assert.equal(ledger.getTransaction(TX)?.state, 'settling');
  const body = outboxBody('Settlement');
  assert.equal(body.BasicInfo.Amount, 3.5);
  assert.equal(body.Products.length, 2);
  assert.deepEqual(body.PaymentInfo, PAYMENT_INFO);
  assert.equal(flow.activeTxId, null, 'the slot is free for the next Start');
});

test('the Authorization carries the age limit and its own time; the Settlement built later repeats both', async () => {
  ctx.settings.staticAgeLimit = 18;
  const authorizedAt = new Date(2026, 0, 2, 3, 4, 5).getTime(); // far from the builders' clock (the real time)
  ctx.now = () => authorizedAt;
  await openSession();
  assert.deepEqual(
    [authRequests[0]?.BasicInfo.MachineAuTime, authRequests[0]?.BasicInfo.AgeLimitation],
    ['020126030405', 18],
  );
  flow.handle({ type: 'vend.approved', txId: TX, vendSeq: 1, price: 1.5, item: 12 });
  flow.handle({ type: 'vend.result', txId: TX, requestId: null, vendSeq: 1, outcome: 'success', detail: null });
  flow.handle({ type: 'session.ended', txId: TX, reason: 'complete', vendsSucceeded: 1, amountVended: 1.5 });
  const body = outboxBody('Settlement');
  assert.deepEqual([body.BasicInfo.MachineAuTime, body.BasicInfo.AgeLimitation], ['020126030405', 18]);
});

test('an item denied for its age limit: the display says why', async () => {
  await openSession();
  flow.handle({ type: 'vend.denied', txId: TX, price: 2, item: 30, reason: 'age-restricted item (18+)', ageLimit: 18 });
  assert.deepEqual(shown.at(-1), ageDeniedScreen());
  assert.deepEqual(ageDeniedScreen(), { kind: 'declined', reason: 'age-restricted', code: null });
  const before = shown.length;
  flow.handle({
    type: 'vend.denied',
    txId: TX,
    price: 9,
    item: 12,
    reason: 'price above the remaining funds',
    ageLimit: null,
  });
  assert.equal(shown.length, before, "a funds denial is the VMC's to show");
});

test('a vend write refused mid-session: the session is stopped, the vend still reaches the Settlement', async () => {
  await openSession();
  flow.handle({ type: 'vend.approved', txId: TX, vendSeq: 1, price: 1.5, item: 12 });
  failing = new Set(['recordVendResult']);
  flow.handle({ type: 'vend.result', txId: TX, requestId: null, vendSeq: 1, outcome: 'success', detail: null });
  assert.deepEqual(
    sent.at(-1),
    { type: 'session.cancel', txId: TX, reason: 'storage unavailable' },
    'no more vends are approved',
  );
  assert.deepEqual(ledger.vendsOf(TX), [], 'the approval written with the outcome went with it: one commit');
  failing = new Set();
  flow.handle({ type: 'session.ended', txId: TX, reason: 'reader-cancel', vendsSucceeded: 1, amountVended: 1.5 });
  assert.equal(outboxBody('Settlement').BasicInfo.Amount, 1.5);
});

test('one commit per vend: the session opening and approval are written with the outcome, none before', async () => {
  await openSession();
  assert.equal(ledger.getTransaction(TX)?.state, 'authorized', 'session.started alone writes nothing');
  flow.handle({ type: 'vend.approved', txId: TX, vendSeq: 1, price: 1.5, item: 12 });
  assert.deepEqual(
    ledger.vendsOf(TX),
    [],
    'an approval alone writes nothing (recovery treats it like no vend: not charged)',
  );
  flow.handle({ type: 'vend.result', txId: TX, requestId: null, vendSeq: 1, outcome: 'success', detail: null });
  assert.equal(ledger.getTransaction(TX)?.state, 'session_open');
  assert.deepEqual(
    ledger.vendsOf(TX).map((v) => [v.seq, v.state]),
    [[1, 'success']],
  );
  assert.deepEqual(
    ledger
      .eventsOf(TX)
      .slice(-3)
      .map((e) => e.kind),
    ['openSession', 'vend.approved', 'vend.success'],
  );
});

test('the Start and its Authorization are recorded in one commit before the Authorization goes out', async () => {
  failing = new Set(['markAuthorizing']);
  await assert.rejects(flow.accept(start()));
  assert.equal(ledger.getTransaction(TX), null, 'a refused write keeps neither: the Start is not answered Approved');
  assert.equal(authRequests.length, 0, 'nothing was sent for a Start that was not recorded');
  failing = new Set();
  const send = ctx.gateway.authorization;
  let stateWhenSent: string | undefined;
  ctx.gateway.authorization = (request) => ((stateWhenSent = ledger.getTransaction(TX)?.state), send(request));
  await flow.accept(start());
  await waitFor(() => stateWhenSent, 'the Authorization');
  assert.equal(stateWhenSent, 'authorizing', 'durable as authorizing when the Authorization goes out');
});

test('the Start is answered before the Authorization goes out; the answer written sends it at once', async () => {
  await flow.accept(start());
  assert.equal(
    authRequests.length,
    0,
    'accept() resolved (the endpoint answers Approved) before the Authorization was sent',
  );
  flow.answered('ANOTHER-TX');
  assert.equal(authRequests.length, 0, 'the answer to another Start sends nothing');
  flow.answered(TX);
  assert.equal(authRequests.length, 1, 'sent as soon as the endpoint says the answer is out');
  await new Promise<void>((resolve) => setImmediate(resolve));
  assert.equal(authRequests.length, 1, 'once: the next turn does not send it again');
});

test('a Start answered without the endpoint (relayed) is authorized on the next turn', async () => {
  await flow.accept(start());
  assert.equal(authRequests.length, 0);
  await new Promise<void>((resolve) => setImmediate(resolve));
  assert.equal(authRequests.length, 1);
});

test('a closing the disk refused is kept, written once the disk is back; recovery leaves it alone', async () => {
  await openSession();
  flow.handle({ type: 'vend.approved', txId: TX, vendSeq: 1, price: 2, item: 3 });
  flow.handle({ type: 'vend.result', txId: TX, requestId: null, vendSeq: 1, outcome: 'success', detail: null });
  failing = new Set(['settleSession']);
  flow.handle({ type: 'session.ended', txId: TX, reason: 'complete', vendsSucceeded: 1, amountVended: 2 });
  assert.equal(ledger.getTransaction(TX)?.state, 'session_open');
  assert.equal(flow.activeTxId, null, 'the machine is not stuck');
  assert.ok(flow.owns(TX), 'still owned: recovery must not settle it from a partial view');
  failing = new Set();
  flow.retryUnclosed();
  assert.equal(ledger.getTransaction(TX)?.state, 'settling');
  assert.equal(outboxBody('Settlement').BasicInfo.Amount, 2);
  assert.equal(flow.owns(TX), false);
});

test('a vend with no result when the session ends is not charged: Cancel, ReasonCode 3', async () => {
  await openSession();
  flow.handle({ type: 'vend.approved', txId: TX, vendSeq: 1, price: 2, item: 3 });
  flow.handle({ type: 'session.ended', txId: TX, reason: 'link-lost', vendsSucceeded: 0, amountVended: 0 });
  assert.equal(ledger.vendsOf(TX)[0]?.state, 'timeout');
  const body = outboxBody('Cancel');
  assert.equal(body.ReasonCode, 3);
  assert.deepEqual(body.PaymentInfo, PAYMENT_INFO);
});

test('the VMC ends the session: Cancel ReasonCode 2 if nothing was approved, 3 if an approved vend fails', async () => {
  await openSession();
  flow.handle({ type: 'session.ended', txId: TX, reason: 'complete', vendsSucceeded: 0, amountVended: 0 });
  assert.equal(outboxBody('Cancel').ReasonCode, 2, 'no selection: the consumer walked away');

  ledger.close();
  rmSync(dir, { recursive: true, force: true });
  setUp();
  await openSession();
  flow.handle({ type: 'vend.approved', txId: TX, vendSeq: 1, price: 1.15, item: 4 });
  flow.handle({
    type: 'vend.result',
    txId: TX,
    requestId: null,
    vendSeq: 1,
    outcome: 'failed',
    detail: 'c,ERR,VEND 3',
  });
  flow.handle({ type: 'session.ended', txId: TX, reason: 'complete', vendsSucceeded: 0, amountVended: 0 });
  assert.equal(outboxBody('Cancel').ReasonCode, 3, "the approved vend was not dispensed: the machine's doing");
});

test('a vend reset after its approval (MDB 4.2 7.4.7) is in the Settlement; a failed one is not', async () => {
  await openSession();
  flow.handle({ type: 'vend.approved', txId: TX, vendSeq: 1, price: 0.29, item: 7 });
  flow.handle({
    type: 'vend.result',
    txId: TX,
    requestId: null,
    vendSeq: 1,
    outcome: 'failed',
    detail: 'c,ERR,VEND 3',
  });
  flow.handle({ type: 'vend.approved', txId: TX, vendSeq: 2, price: 1.15, item: 12 });
  flow.handle({ type: 'vend.result', txId: TX, requestId: null, vendSeq: 2, outcome: 'reset', detail: 'c,ERR,VEND 5' });
  flow.handle({ type: 'session.ended', txId: TX, reason: 'vmc-reset', vendsSucceeded: 1, amountVended: 1.15 });
  assert.equal(ledger.getTransaction(TX)?.state, 'settling');
  const body = outboxBody('Settlement');
  assert.equal(body.BasicInfo.Amount, 1.15);
  assert.deepEqual(
    body.Products.map((p: { Code: number; Price: number }) => [p.Code, p.Price]),
    [[12, 1.15]],
  );
  assert.deepEqual(shown.at(-1), { kind: 'thank-you', amount: 1.15, currencyCode: 'EUR', decimalPlaces: 2, txId: TX });
});

// Prices whose binary value falls just below the decimal one (0.29 * 100 = 28.999999999999996,
// 1.005 * 1000 = 1004.9999999999999): a sum that truncates instead of rounding loses a cent.
const settlements: Array<{ currency: Currency; prices: number[]; total: number }> = [
  { currency: EUR, prices: [0.29, 1.15, 4.35], total: 5.79 },
  {
    currency: { decimalPlaces: 0, currencyCode: 'JPY', currencyNumeric: '392', preauthAmount: 1000 },
    prices: [130, 150, 320],
    total: 600,
  },
  {
    currency: { decimalPlaces: 3, currencyCode: 'KWD', currencyNumeric: '414', preauthAmount: 10 },
    prices: [0.295, 1.005, 4.35],
    total: 5.65,
  },
];
for (const { currency, prices, total } of settlements) {
  test(
    `${currency.currencyCode} (${currency.decimalPlaces} decimals): the ` +
      `Settlement of ${prices.join(' + ')} is ${total}, every price as sold`,
    async () => {
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
      setUp(currency);
      await openSession(currency.preauthAmount);
      prices.forEach((price, i) => {
        flow.handle({ type: 'vend.approved', txId: TX, vendSeq: i + 1, price, item: 10 + i });
        flow.handle({
          type: 'vend.result',
          txId: TX,
          requestId: null,
          vendSeq: i + 1,
          outcome: 'success',
          detail: null,
        });
      });
      flow.handle({
        type: 'session.ended',
        txId: TX,
        reason: 'complete',
        vendsSucceeded: prices.length,
        amountVended: total,
      });
      assert.equal(ledger.getTransaction(TX)?.state, 'settling');
      const body = outboxBody('Settlement');
      assert.equal(body.BasicInfo.Amount, total);
      assert.deepEqual(
        [body.BasicInfo.CurrencyCode, body.BasicInfo.CurrencyNumeric, body.MachineInfo.DecimalPlace],
        [currency.currencyCode, currency.currencyNumeric, currency.decimalPlaces],
      );
      assert.deepEqual(
        body.Products.map((p: { Code: number; Price: number }) => [p.Code, p.Price]),
        prices.map((price, i) => [10 + i, price]),
      );
      assert.deepEqual(shown.at(-1), {
        kind: 'thank-you',
        amount: total,
        currencyCode: currency.currencyCode,
        decimalPlaces: currency.decimalPlaces,
        txId: TX,
      });
    },
  );
}
