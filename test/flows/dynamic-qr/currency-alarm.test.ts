/**
 * A Dynamic QR payment the gateway reports paid in another currency than asked (docs/payments.md;
 * src/flows/currency-alarm.ts), through the runner on a real SQLite ledger with the gateway played
 * by a stub: the vend is denied, the payment voided, and the alarm GATEWAY_CURRENCY_MISMATCH names
 * the gateway's answer, as the Static flow's Authorization does; a payment then approved in the
 * currency asked clears it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config/load.js';
import { silentLogger } from '../../../src/core/log.js';
import { createRequestBuilders } from '../../../src/gateway/envelope.js';
import type { GatewayOutcome } from '../../../src/gateway/outcome.js';
import { openLedger } from '../../../src/ledger/index.js';
import { outboxBodies } from '../../../src/flows/bodies.js';
import { realTimers, type FlowContext } from '../../../src/flows/context.js';
import { DynamicQrPayments } from '../../../src/flows/dynamic-qr/runner.js';
import type { PaymentToMain } from '../../../src/ipc/messages.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const { config } = loadConfig({ env: {} });
const T = { timeout: TEST_DEADLINE_MS };

// The gateway's answers: a QR, then an Inquiry paid in USD/840 when EUR/978 was asked (read as
// declined 8 with the money held: src/gateway/currency-check.ts), or paid as asked.
const QR = '{"QRCode":"https://pay.invalid/qr/1","QRData":{"SrvTranId":"S1","RRN":"R1"}}';
const PI = '{"SrvTranId":"S1","AuthAmount":1.5}';
const inUsd: GatewayOutcome<unknown> = {
  kind: 'declined',
  code: 8,
  message: 'answer in another currency (USD/840) than asked (EUR/978)',
  response: { PaymentInfo: JSON.parse(PI) },
  bodyText: `{"PaymentInfo":${PI}}`,
  elapsedMs: 1,
  heldFunds: true,
  currencies: { asked: 'EUR/978', answered: 'USD/840' },
};
const asAsked: GatewayOutcome<unknown> = {
  kind: 'approved',
  response: { PaymentInfo: JSON.parse(PI) },
  bodyText: `{"PaymentInfo":${PI}}`,
  elapsedMs: 1,
};

test('paid in another currency: denied, voided, the alarm names the answer; paid as asked clears it', T, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-dynamic-currency-'));
  const ledger = openLedger({ path: join(dir, 'ledger.sqlite'), decimalPlaces: 2 });
  const alarms: Array<[string, boolean, string | null]> = [];
  const sent: PaymentToMain[] = [];
  let inquiry: GatewayOutcome<unknown> = inUsd;
  let answered: () => void = () => {};
  const builders = createRequestBuilders(config, { hwSerial: 'HW', fwVersion: 'test', type: 'qrvend' });
  const ctx: FlowContext = {
    ledger,
    gateway: {
      authorization: async () => assert.fail('no Authorization in a Dynamic QR payment'),
      generateQR: async () => ({ kind: 'approved', response: JSON.parse(QR), bodyText: QR, elapsedMs: 1 }),
      inquiry: async () => (setImmediate(() => answered()), inquiry),
    } as unknown as FlowContext['gateway'],
    builders: () => builders,
    bodies: outboxBodies(() => builders, { preauthAmount: 5, decimalPlaces: 2 }),
    toMain: (m) => sent.push(m),
    show: () => {},
    outboxChanged: () => {},
    settings: {
      preauthAmount: 5,
      decimalPlaces: 2,
      currencyCode: 'EUR',
      paymentTimeoutMs: 10_000,
      pollIntervalMs: 10,
      uniQr: 'U',
      staticAgeLimit: null,
      readerGraceMs: 30_000,
    },
    log: silentLogger(),
    now: Date.now,
    timers: realTimers,
    alarm: (code, active, detail) => void alarms.push([code, active, detail]),
  };
  const payments = new DynamicQrPayments(ctx);
  try {
    const ended = () => new Promise<void>((resolve) => (answered = () => setImmediate(resolve)));
    let done = ended();
    payments.begin('r1', 1.5, 4);
    await done;
    assert.deepEqual(
      sent.map((m) => m.type),
      ['vend.deny'],
    );
    assert.equal(alarms.length, 1);
    const [code, active, detail] = alarms[0]!;
    assert.deepEqual([code, active], ['GATEWAY_CURRENCY_MISMATCH', true]);
    assert.match(detail ?? '', /Dynamic QR payment \S+ in USD\/840 when EUR\/978 was asked.*code 8/);
    assert.equal(ledger.unresolvedTransactions().length, 0, 'the payment is voided (its Void in the outbox)');

    inquiry = asAsked;
    done = ended();
    payments.begin('r2', 1.5, 4);
    await done;
    assert.deepEqual(alarms.at(-1), ['GATEWAY_CURRENCY_MISMATCH', false, null]);
  } finally {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
