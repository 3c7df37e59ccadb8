/**
 * The payment side's front door (src/flows/payment-service.ts), docs/decisions/real-vending-machines.md items 6 and 7:
 * - the VMC disables the reader in the middle of a dynamic QR vend request (its card reader or
 *   cash took the selection): the payment is abandoned and the idle screen comes back, not
 *   "out of order"; a plain disable still shows "out of order" once the grace period is over;
 * - at a start the screen is neutral ("One moment") until the VMC enables the reader, and out of
 *   order only when it has not within display.readerGraceS (docs/decisions/smallest-boards.md item 7);
 * - a cash sale the reader reports is recorded in the ledger and charges nothing.
 */
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/core/log.js';
import { createRequestBuilders } from '../../src/gateway/envelope.js';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { outboxBodies } from '../../src/flows/bodies.js';
import type { FlowContext } from '../../src/flows/context.js';
import { PaymentService } from '../../src/flows/payment-service.js';
import type { PaymentToMain, Screen } from '../../src/ipc/messages.js';

const { config } = loadConfig({ env: {} });

let dir: string;
let ledger: Ledger;
let sent: PaymentToMain[];
let shown: Screen[];
let timers: Array<() => void>;
let inquiries: number;
/** Answers the last Inquiry (held until the test lets it through). */
let releaseLast: (() => void) | null;
let service: PaymentService;
/** The monotonic clock the service reads (the grace period runs on it). */
let clock: number;

beforeEach(() => {
  clock = 1_000;
  dir = mkdtempSync(join(tmpdir(), 'qrvend-service-'));
  ledger = openLedger({ path: join(dir, 'ledger.sqlite'), decimalPlaces: 2 });
  sent = [];
  shown = [];
  timers = [];
  inquiries = 0;
  releaseLast = null;
  const builders = createRequestBuilders(config, { hwSerial: 'HW', fwVersion: 'test', type: 'qrvend' });
  const ctx: FlowContext = {
    ledger,
    gateway: {
      authorization: async () => assert.fail('no Authorization here'),
      generateQR: async () => ({
        kind: 'approved',
        response: { QRCode: 'https://pay.example/q/1', QRData: { RRN: 'R1', SrvTranId: 'S1' } },
        elapsedMs: 1,
      }),
      // Never paid: pending until the last poll, which the gateway answers "timed out, unpaid".
      inquiry: async (body: { Polling: { IsLastPolling: boolean } }) => {
        inquiries += 1;
        const answer = {
          kind: 'declined',
          code: body.Polling.IsLastPolling ? 992 : 993,
          message: 'pending',
          response: {},
          elapsedMs: 1,
        };
        if (!body.Polling.IsLastPolling) return answer;
        return new Promise((resolve) => (releaseLast = () => resolve(answer)));
      },
    } as unknown as FlowContext['gateway'],
    builders: () => builders,
    bodies: outboxBodies(() => builders, { preauthAmount: 5, decimalPlaces: 2 }),
    toMain: (m) => sent.push(m),
    show: (screen) => shown.push(screen),
    outboxChanged: () => {},
    settings: {
      preauthAmount: 5,
      decimalPlaces: 2,
      currencyCode: 'EUR',
      paymentTimeoutMs: 60_000,
      pollIntervalMs: 60_000,
      uniQr: 'U',
      staticAgeLimit: null,
      readerGraceMs: 30_000,
    },
    log: silentLogger(),
    now: Date.now,
    monotonicNow: () => clock,
    // Timers run only when the test says so: the idle screen's delay, the poll schedule.
    timers: { setTimeout: (fn: () => void) => (timers.push(fn), timers.length), clearTimeout: () => {} },
  };
  service = new PaymentService(ctx);
});

afterEach(() => {
  ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

function runTimers(): void {
  const due = timers;
  timers = [];
  for (const fn of due) fn();
}

test('the VMC disables the reader while a dynamic QR waits: payment ends unpaid, idle screen back', async () => {
  service.handle({ type: 'reader.status', status: 'enabled', txId: null });
  service.handle({ type: 'vend.requested', requestId: 'rq-1', price: 1.15, item: 12 });
  service.handle({ type: 'reader.status', status: 'vend', txId: null });
  await settle();
  assert.equal(shown.at(-1)?.kind, 'dynamic-qr');
  // The reader's abandon: the request ends (not by the consumer), then the status.
  service.handle({
    type: 'vend.request.ended',
    requestId: 'rq-1',
    reason: 'the VMC disabled the reader',
    byConsumer: false,
  });
  service.handle({ type: 'reader.status', status: 'disabled', txId: null });
  await settle();
  assert.ok(!shown.some((s) => s.kind === 'out-of-order'), `no out-of-order screen: ${JSON.stringify(shown)}`);
  assert.equal(inquiries, 1, 'one last Inquiry, flagged IsLastPolling, decides');
  runTimers(); // the moment passes while the last Inquiry is still out: the QR's payment is not over yet
  assert.notEqual(shown.at(-1)?.kind, 'idle');
  releaseLast!();
  await settle();
  assert.equal(service.dynamicQr.activeCount, 0);
  assert.equal(ledger.outbox.counts().pending, 0, 'nothing was paid: no Void');
  assert.deepEqual(
    sent.filter((m) => m.type === 'vend.approve'),
    [],
    'no vend',
  );
  runTimers();
  assert.deepEqual(shown.at(-1), { kind: 'idle', qrText: 'U' });
});

test('a plain disable (no vend request running) still shows out of order, after the grace period', () => {
  service.handle({ type: 'reader.status', status: 'enabled', txId: null });
  clock += 600_000;
  service.handle({ type: 'reader.status', status: 'disabled', txId: null });
  assert.deepEqual(shown.at(-1), { kind: 'waiting' }, 'the VMC pauses the reader in normal operation too');
  clock += 29_999;
  runTimers();
  clock += 1;
  runTimers();
  assert.deepEqual(shown.at(-1), { kind: 'out-of-order', reason: 'unavailable', code: 'E-RDR-DIS' });
});

test('a normal start: neutral until the VMC enables the reader, never out of order', () => {
  assert.deepEqual(shown, [{ kind: 'waiting' }], 'the first screen');
  // The board comes up and the VMC sets the reader up: inactive, then disabled, then enabled.
  clock += 2_000;
  service.handle({ type: 'reader.status', status: 'inactive', txId: null });
  clock += 5_000;
  service.handle({ type: 'reader.status', status: 'disabled', txId: null });
  clock += 10_000;
  service.handle({ type: 'reader.status', status: 'enabled', txId: null });
  clock += 60_000;
  runTimers(); // the grace timers armed on the way, long due, change nothing
  assert.ok(!shown.some((s) => s.kind === 'out-of-order'), JSON.stringify(shown));
  assert.deepEqual(shown.at(-1), { kind: 'idle', qrText: 'U' });
});

test('a start where the VMC never enables the reader: out of order once the grace period from start is over', () => {
  service.handle({ type: 'reader.status', status: 'inactive', txId: null });
  clock += 20_000;
  service.handle({ type: 'reader.status', status: 'disabled', txId: null });
  assert.deepEqual(shown.at(-1), { kind: 'waiting' }, 'the grace period runs from the start, not from each status');
  clock += 10_000;
  runTimers();
  assert.deepEqual(shown.at(-1), { kind: 'out-of-order', reason: 'unavailable', code: 'E-RDR-DIS' });
});

test('a reader that stays offline at a start: E-RDR-OFF after the grace period', () => {
  clock += 30_000;
  runTimers();
  assert.deepEqual(shown.at(-1), { kind: 'out-of-order', reason: 'reader-offline', code: 'E-RDR-OFF' });
});

test('a cash sale is recorded in the ledger and charges nothing', () => {
  service.handle({ type: 'cash.sale', price: 4.35, item: 21 });
  service.handle({ type: 'cash.sale', price: 0.29, item: 7 });
  assert.deepEqual(ledger.cashSales.totals(), { count: 2, sumMinor: 464 });
  assert.equal(ledger.outbox.counts().pending, 0);
  assert.deepEqual(sent, []);
});

test('a board spewing cash-sale lines costs at most 20 writes a minute; the rest are dropped', () => {
  for (let i = 0; i < 500; i++) service.handle({ type: 'cash.sale', price: 1.15, item: 12 });
  assert.deepEqual(ledger.cashSales.totals(), { count: 20, sumMinor: 2300 });
});

test(
  'an update holds new Starts off (busy) and reports what is in ' +
    'flight: a payment, a delivery; let go, Starts are taken again',
  async () => {
    service.handle({ type: 'reader.status', status: 'enabled', txId: null });
    const hooks = service.startHooks();
    assert.equal(hooks.readerBusy(), null);
    assert.deepEqual(service.holdForUpdate(true, 0), { busy: null });
    assert.equal(hooks.readerBusy(), 'restarting for an update');
    assert.deepEqual(service.holdForUpdate(true, 2), { busy: 'outbox delivery in flight' });
    assert.deepEqual(service.holdForUpdate(false, 0), { busy: null });
    assert.equal(hooks.readerBusy(), null);
    service.handle({ type: 'vend.requested', requestId: 'rq-9', price: 1, item: 3 });
    await settle();
    assert.deepEqual(service.holdForUpdate(false, 0), { busy: 'payment running' });
  },
);
