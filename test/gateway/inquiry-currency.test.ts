/**
 * An Inquiry answer that names the currency it was paid in (docs/decisions/gateway-interface.md):
 * the gateway client over real loopback HTTP against a small server answering each Inquiry with
 * the body a case gives. Its BasicInfo is read for the currency only (other members ignored): an
 * approval in another currency than asked is a decline (8) with the money held, naming both
 * currencies; one in the currency asked stays an approval; a currency member that is no currency
 * code, or a member beside BasicInfo the answer does not have, is still a malformed answer.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayClient, type GatewayClient } from '../../src/gateway/client.js';
import { createRequestBuilders, paymentInfoFromGenerateQR } from '../../src/gateway/envelope.js';
import type { GatewayOutcome } from '../../src/gateway/outcome.js';
import { DEVICE, FIXED_NOW, sampleConfig } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const b = createRequestBuilders(sampleConfig(), DEVICE, FIXED_NOW);
const PAID = { SrvTranId: 'Q1', RRN: 'R1', AuthAmount: 1.5, AuthCode: '123456' };
const APPROVED = { Verdict: 'Approved' };

const inquiry = () =>
  b.inquiry({
    txId: 'inquiry-currency-1',
    amount: 1.5,
    paymentInfo: paymentInfoFromGenerateQR({ QRData: { SrvTranId: 'Q1', RRN: 'R1' } }, 1.5, 2),
    attempt: 1,
    isLast: false,
    products: [{ item: 12, price: 1.5 }],
  });

describe('an Inquiry answer naming its currency', () => {
  let server: http.Server;
  let client: GatewayClient;
  let answer: unknown = null;
  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = createGatewayClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 2_000, connectTimeoutMs: 1_000 });
  });
  after(async () => {
    client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const ask = async (body: unknown): Promise<GatewayOutcome<unknown>> => {
    answer = body;
    return client.inquiry(inquiry());
  };

  it('approved in USD/840 when EUR/978 was asked: declined 8, the money held, both currencies named', T, async () => {
    // Members of BasicInfo other than the currency are ignored, whatever they hold.
    const basicInfo = { CurrencyCode: 'USD', CurrencyNumeric: '840', TransactionId: 7, Anything: { deep: [1] } };
    const o = await ask({ BasicInfo: basicInfo, PaymentInfo: PAID, Status: APPROVED });
    assert.equal(o.kind, 'declined', JSON.stringify(o));
    if (o.kind !== 'declined') return;
    assert.equal(o.code, 8);
    assert.equal(o.heldFunds, true);
    assert.deepEqual(o.currencies, { asked: 'EUR/978', answered: 'USD/840' });
    assert.deepEqual((o.response as { PaymentInfo: unknown }).PaymentInfo, PAID, 'the PaymentInfo to void with');
  });

  it('approved naming the currency asked (or only its code): an approval', T, async () => {
    for (const basicInfo of [{ CurrencyCode: 'EUR', CurrencyNumeric: '978', Amount: 1.5 }, { CurrencyCode: 'EUR' }]) {
      const o = await ask({ BasicInfo: basicInfo, PaymentInfo: PAID, Status: APPROVED });
      assert.equal(o.kind, 'approved', JSON.stringify(o));
    }
  });

  it('declined in another currency: the decline as it came, nothing held', T, async () => {
    const o = await ask({ BasicInfo: { CurrencyCode: 'USD' }, Status: { Verdict: 'Declined', Code: 993 } });
    assert.equal(o.kind, 'declined');
    if (o.kind !== 'declined') return;
    assert.equal(o.code, 993);
    assert.equal(o.heldFunds, undefined);
  });

  it('a currency that is no currency code, or another member beside BasicInfo: a malformed answer', T, async () => {
    const cases: [unknown, RegExp][] = [
      [{ BasicInfo: { CurrencyCode: 'usd' }, PaymentInfo: PAID, Status: APPROVED }, /BasicInfo\.CurrencyCode/],
      [{ BasicInfo: { CurrencyNumeric: 840 }, PaymentInfo: PAID, Status: APPROVED }, /BasicInfo\.CurrencyNumeric/],
      [{ BasicInfo: 'USD', PaymentInfo: PAID, Status: APPROVED }, /BasicInfo/],
      [{ MachineInfo: {}, PaymentInfo: PAID, Status: APPROVED }, /MachineInfo/],
    ];
    for (const [body, names] of cases) {
      const o = await ask(body);
      assert.equal(o.kind, 'transport', JSON.stringify(body));
      if (o.kind !== 'transport') continue;
      assert.equal(o.failure, 'bad-schema');
      assert.match(o.detail, names);
    }
  });
});
