/**
 * Every schema rule of the gateway protocol with a passing and a failing case: lengths at the
 * limit and one past it, closed objects with an extra member, missing required members, wrong
 * types, enumerations, date-times and the amount's decimal places.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequestBuilders } from '../../src/gateway/envelope.js';
import { encodeRequest, RawJson } from '../../src/gateway/wire/index.js';
import { validateRequest, validateResponse, type ValidationResult } from '../../src/gateway/protocol/index.js';
import type { GatewayOperation } from '../../src/gateway/outcome.js';
import { DEVICE, FIXED_NOW, sampleConfig, withMember } from './helpers.js';

const b = createRequestBuilders(sampleConfig(), DEVICE, FIXED_NOW);
const paymentInfo = {
  SrvTranId: 'S1',
  AuthCode: '123456',
  AuthAmount: 5,
  RRN: '000000000001',
  AuthDateTime: '050326140709',
};
const pi = new RawJson(JSON.stringify(paymentInfo));
const products = [{ item: 12, price: 1.5 }];
const closes = { machineAuTime: '050326140709', ageLimit: null };
/** A request as the gateway receives it (parsed from the bytes sent). */
const wire = (request: object): Record<string, unknown> =>
  JSON.parse(encodeRequest(request)) as Record<string, unknown>;
const REQUESTS: Record<GatewayOperation, Record<string, unknown>> = {
  Authorization: wire(b.authorization({ txId: 'tx-00000001', amount: 5 })),
  Settlement: wire(b.settlement({ txId: 'tx-00000001', amount: 1.5, paymentInfo: pi, products, ...closes })),
  Cancel: wire(b.cancel({ txId: 'tx-00000001', amount: 5, paymentInfo: pi, reasonCode: 2, ...closes })),
  GenerateQR: wire(b.generateQR({ txId: 'tx-00000002', amount: 1.5, products })),
  Inquiry: wire(
    b.inquiry({
      txId: 'tx-00000002',
      amount: 1.5,
      paymentInfo: new RawJson('{"SrvTranId":"Q1","RRN":"R1","AuthAmount":1.50}'),
      attempt: 1,
      isLast: false,
      products,
    }),
  ),
  Void: wire(b.void({ txId: 'tx-00000002', amount: 1.5, paymentInfo: pi, reasonCode: 3, ...closes })),
};
const RESPONSES: Record<GatewayOperation, Record<string, unknown>> = {
  Authorization: { PaymentInfo: paymentInfo, Status: { Verdict: 'Approved' } },
  Settlement: { Status: { Verdict: 'Approved' } },
  Cancel: { Status: { Verdict: 'Approved' } },
  GenerateQR: {
    QRCode: 'qr-text',
    QRData: { ChannelId: 'CH-1', RRN: 'R1', SrvTranId: 'Q1' },
    Status: { Verdict: 'Approved', Code: 0, CustomDeclineCode: 0 },
  },
  Inquiry: { PaymentInfo: paymentInfo, Status: { Verdict: 'Approved' } },
  Void: { PaymentInfo: paymentInfo, Status: { Verdict: 'Approved' } },
};

function expectOk(r: ValidationResult<unknown>, what: string): void {
  assert.equal(r.ok, true, `${what}: expected valid, got ${JSON.stringify(r)}`);
}
function expectProblem(r: ValidationResult<unknown>, code: 997 | 998, dotted: string, what: string): void {
  const member = dotted.replace(/\.(\d+)/g, '[$1]'); // Products.0.Price -> Products[0].Price
  assert.equal(r.ok, false, `${what}: expected a problem`);
  if (r.ok) return;
  assert.equal(r.code, code, `${what}: code (${r.message})`);
  assert.equal(r.member, member, `${what}: member (${r.message})`);
  if (member !== '') assert.ok(r.message.includes(member), `${what}: the message names the member: ${r.message}`);
}
const req = (op: GatewayOperation, path: string, value: unknown) =>
  validateRequest(op, withMember(REQUESTS[op], path, value));
const res = (op: GatewayOperation, path: string, value: unknown) =>
  validateResponse(op, withMember(RESPONSES[op], path, value));

describe('gateway protocol: the base bodies are valid', () => {
  for (const op of Object.keys(REQUESTS) as GatewayOperation[]) {
    it(`${op} request and response`, () => {
      expectOk(validateRequest(op, REQUESTS[op]), `${op} request`);
      expectOk(validateResponse(op, RESPONSES[op]), `${op} response`);
    });
  }
});

describe('gateway protocol: length limits (at the limit passes, one past fails with 998)', () => {
  const cases: [string, number][] = [
    ['ActorInfo.DynamicURL', 255],
    ['ActorInfo.MerchantId', 255],
    ['ActorInfo.Name', 255],
    ['ActorInfo.OperatorName', 255],
    ['ActorInfo.SubMerchantId', 255],
    ['MachineInfo.City', 255],
    ['MachineInfo.Name', 255],
    ['MachineInfo.OperatorId', 255],
    ['MachineInfo.Region', 255],
    ['MachineInfo.TerminalId', 255],
    ['MachineInfo.Offset', 255],
    ['MachineInfo.ZipCode', 255],
    ['MachineInfo.ExternalId', 200],
    ['MachineInfo.Type', 50],
    ['MachineInfo.GeoLocation.Address', 255],
    ['MachineInfo.GeoLocation.City', 255],
    ['MachineInfo.GeoLocation.ZipCode', 255],
    ['ActorInfo.GeoLocation.Address', 255],
    ['ActorInfo.GeoLocation.City', 255],
    ['ActorInfo.GeoLocation.ZipCode', 255],
  ];
  for (const [path, limit] of cases) {
    it(`${path} <= ${limit}`, () => {
      expectOk(req('Authorization', path, 'x'.repeat(limit)), `${path} at ${limit}`);
      expectProblem(req('Authorization', path, 'x'.repeat(limit + 1)), 998, path, `${path} at ${limit + 1}`);
    });
  }
  for (const op of ['Cancel', 'Void'] as const) {
    it(`${op} ReasonText <= 255`, () => {
      expectOk(req(op, 'ReasonText', 'r'.repeat(255)), 'at 255');
      expectProblem(req(op, 'ReasonText', 'r'.repeat(256)), 998, 'ReasonText', 'at 256');
    });
  }
  it('Status.StatusMessage <= 255', () => {
    expectOk(res('Settlement', 'Status.StatusMessage', 'm'.repeat(255)), 'at 255');
    expectProblem(res('Settlement', 'Status.StatusMessage', 'm'.repeat(256)), 998, 'Status.StatusMessage', 'at 256');
  });
  it('CountryInfo codes have exact lengths', () => {
    expectOk(req('Authorization', 'MachineInfo.Country.Alpha2Code', 'DE'), 'alpha-2');
    expectProblem(
      req('Authorization', 'MachineInfo.Country.Alpha2Code', 'DEU'),
      998,
      'MachineInfo.Country.Alpha2Code',
      'alpha-2 of 3',
    );
    expectProblem(
      req('Authorization', 'MachineInfo.Country.Alpha3Code', 'DE'),
      998,
      'MachineInfo.Country.Alpha3Code',
      'alpha-3 of 2',
    );
    expectProblem(
      req('Authorization', 'MachineInfo.Country.NumericCode', '40'),
      998,
      'MachineInfo.Country.NumericCode',
      'numeric of 2',
    );
  });
});

describe('gateway protocol: closed objects refuse an extra member (998)', () => {
  const requestPaths: [GatewayOperation, string][] = [
    ['Authorization', 'ActorInfo'],
    ['Authorization', 'BasicInfo'],
    ['Authorization', 'CustomData'],
    ['Authorization', 'DeviceInfo'],
    ['Authorization', 'MachineInfo.Country'],
    ['Authorization', 'MachineInfo.GeoLocation'],
    ['Settlement', 'PaymentInfo'],
    ['Cancel', ''],
    ['Inquiry', ''],
    ['Inquiry', 'Polling'],
    ['Void', ''],
  ];
  for (const [op, obj] of requestPaths) {
    const path = obj === '' ? 'Extra' : `${obj}.Extra`;
    it(`${op} request: ${path}`, () => expectProblem(req(op, path, 'x'), 998, path, path));
  }
  const responsePaths: [GatewayOperation, string][] = [
    ['Settlement', 'Status'],
    ['Authorization', 'PaymentInfo'],
    ['Cancel', ''],
    ['GenerateQR', ''],
    ['Inquiry', ''],
    ['Void', ''],
  ];
  for (const [op, obj] of responsePaths) {
    const path = obj === '' ? 'Extra' : `${obj}.Extra`;
    it(`${op} response: ${path}`, () => expectProblem(res(op, path, 1), 998, path, path));
  }
  it('open objects accept and drop extra members', () => {
    for (const path of ['Extra', 'MachineInfo.Extra', 'BasicInfo.TransitElement.Extra']) {
      const r = req(
        'Authorization',
        path === 'BasicInfo.TransitElement.Extra' ? 'BasicInfo.TransitElement' : path,
        path === 'BasicInfo.TransitElement.Extra' ? { DenyListIndication: 1, Extra: 1 } : 'x',
      );
      expectOk(r, path);
    }
    expectOk(req('Settlement', 'Products.0.Extra', 'x'), 'Product item');
    expectOk(res('Authorization', 'Extra', 1), 'Authorization response');
  });
});

describe('gateway protocol: missing required members (997)', () => {
  const cases: [GatewayOperation, string][] = [
    ['Authorization', 'BasicInfo'],
    ['Authorization', 'BasicInfo.TransactionId'],
    ['Authorization', 'BasicInfo.Amount'],
    ['Authorization', 'BasicInfo.CurrencyCode'],
    ['Authorization', 'BasicInfo.CurrencyNumeric'],
    ['Authorization', 'MachineInfo.Country.Name'],
    ['Inquiry', 'PaymentInfo'],
    ['Inquiry', 'Polling'],
    ['Inquiry', 'Polling.IsLastPolling'],
    ['Inquiry', 'Polling.PollingAttemptCounter'],
    ['Void', 'PaymentInfo'],
    ['Settlement', 'Products.0.Code'],
    ['Settlement', 'Products.0.Price'],
  ];
  for (const [op, path] of cases) {
    it(`${op}: ${path}`, () => {
      expectProblem(req(op, path, undefined), 997, path, `${path} removed`);
      expectProblem(req(op, path, null), 997, path, `${path} null`);
    });
  }
  it('Status.Verdict is mandatory; a Declined Status needs Code', () => {
    expectProblem(res('Settlement', 'Status.Verdict', undefined), 997, 'Status.Verdict', 'no Verdict');
    expectProblem(res('Settlement', 'Status', { Verdict: 'Declined' }), 997, 'Status.Code', 'Declined without Code');
    expectOk(
      res('Settlement', 'Status', {
        Verdict: 'Declined',
        Code: 10,
        CustomDeclineCode: 10,
        StatusMessage: 'amount missing',
      }),
      'Declined with Code',
    );
  });
  it('an approved Authorization needs PaymentInfo, an approved GenerateQR a QRCode', () => {
    expectProblem(res('Authorization', 'PaymentInfo', undefined), 997, 'PaymentInfo', 'Authorization');
    expectOk(
      validateResponse('Authorization', { Status: { Verdict: 'Declined', Code: 1 } }),
      'declined without PaymentInfo',
    );
    expectProblem(res('GenerateQR', 'QRCode', undefined), 997, 'QRCode', 'GenerateQR');
  });
  it('Status.Code and CustomDeclineCode agree', () => {
    expectOk(res('GenerateQR', 'Status.Code', 0), 'Approved with Code 0');
    expectProblem(
      res('Settlement', 'Status', { Verdict: 'Approved', Code: 5 }),
      998,
      'Status.Code',
      'Approved with Code 5',
    );
    expectProblem(
      res('Settlement', 'Status', { Verdict: 'Declined', Code: 5, CustomDeclineCode: 6 }),
      998,
      'Status.CustomDeclineCode',
      'mirror',
    );
  });
});

describe('gateway protocol: wrong types and enumerations (998)', () => {
  const cases: [GatewayOperation, string, unknown][] = [
    ['Authorization', 'BasicInfo.Amount', '5.00'],
    ['Authorization', 'BasicInfo.Amount', -1],
    ['Authorization', 'BasicInfo.TransactionId', 12345678],
    ['Authorization', 'BasicInfo.CurrencyCode', 'eur'],
    ['Authorization', 'BasicInfo.CurrencyNumeric', '97'],
    ['Authorization', 'BasicInfo.IsDeferredAuthorization', 'yes'],
    ['Authorization', 'BasicInfo.AgeLimitation', 40000],
    ['Authorization', 'ActorInfo.MCC', 1.5],
    ['Authorization', 'ActorInfo.Id', 'x'],
    ['Authorization', 'MachineInfo.DecimalPlace', -1],
    ['Authorization', 'CustomData.Machine', 'not json {'],
    ['Authorization', 'DeviceInfo.HwSerial', 5],
    ['Authorization', 'BasicInfo.TransitElement.DenyListIndication', 3],
    ['Authorization', 'BasicInfo.TransitElement.TransitTransactionType', 4],
    ['Cancel', 'ReasonCode', 40000],
    ['Cancel', 'ReasonCode', 'consumer'],
    ['Settlement', 'Products', { Code: 1 }],
    ['Settlement', 'Products.0.Code', '12'],
    ['Settlement', 'PaymentInfo.AuthAmount', '5'],
    ['Inquiry', 'Polling.IsLastPolling', 'no'],
    ['Inquiry', 'Polling.PollingAttemptCounter', -1],
    ['Authorization', 'MachineInfo.GeoLocation.Latitude', 91],
  ];
  for (const [op, path, value] of cases) {
    it(`${op}: ${path} = ${JSON.stringify(value)}`, () => expectProblem(req(op, path, value), 998, path, path));
  }
  it('a body that is not an object', () => {
    expectProblem(validateRequest('Authorization', 'text'), 998, '', 'string body');
    expectProblem(validateRequest('Authorization', [1]), 998, '', 'array body');
  });
  it('enumerated values: every allowed one passes', () => {
    for (const v of [0, 1, 2])
      expectOk(req('Authorization', 'BasicInfo.TransitElement', { DenyListIndication: v }), `DenyListIndication ${v}`);
    for (const v of [1, 2, 3, 7])
      expectOk(
        req('Authorization', 'BasicInfo.TransitElement', { TransitTransactionType: v }),
        `TransitTransactionType ${v}`,
      );
    expectOk(res('Settlement', 'Status', { Verdict: 'Declined', Code: 1 }), 'Declined');
    expectProblem(res('Settlement', 'Status.Verdict', 'Maybe'), 998, 'Status.Verdict', 'Verdict Maybe');
  });
});

describe('gateway protocol: date-times ddMMyyHHmmss', () => {
  const good = ['050326140709', '311224235959', '290224000000', '010100000000'];
  const bad = [
    '321224000000',
    '290223000000',
    '011324000000',
    '010124240000',
    '010124006000',
    '0101240000',
    '2024-01-01',
    'abcdefghijkl',
  ];
  for (const v of good) it(`${v} passes`, () => expectOk(req('Authorization', 'BasicInfo.MachineAuTime', v), v));
  for (const v of bad)
    it(`${v} fails`, () =>
      expectProblem(req('Authorization', 'BasicInfo.MachineAuTime', v), 998, 'BasicInfo.MachineAuTime', v));
  it('PaymentInfo.AuthDateTime and SettDateTime use the same format', () => {
    expectProblem(
      res('Inquiry', 'PaymentInfo.SettDateTime', '2026-03-05'),
      998,
      'PaymentInfo.SettDateTime',
      'SettDateTime',
    );
    expectOk(res('Inquiry', 'PaymentInfo.SettDateTime', '050326140709'), 'SettDateTime ok');
  });
});

describe('gateway protocol: amounts carry at most MachineInfo.DecimalPlace decimals', () => {
  it('BasicInfo.Amount', () => {
    expectOk(req('Authorization', 'BasicInfo.Amount', 1.01), '1.01 with 2');
    expectProblem(req('Authorization', 'BasicInfo.Amount', 1.005), 998, 'BasicInfo.Amount', '1.005 with 2');
    const zero = withMember(REQUESTS.Authorization, 'MachineInfo.DecimalPlace', 0);
    expectOk(validateRequest('Authorization', withMember(zero, 'BasicInfo.Amount', 234)), '234 with 0');
    expectProblem(
      validateRequest('Authorization', withMember(zero, 'BasicInfo.Amount', 2.5)),
      998,
      'BasicInfo.Amount',
      '2.5 with 0',
    );
  });
  it('product prices (Products and GenerateQR Product)', () => {
    expectProblem(req('Settlement', 'Products.0.Price', 1.001), 998, 'Products[0].Price', 'Settlement');
    expectProblem(req('GenerateQR', 'Product.0.Price', 1.001), 998, 'Product[0].Price', 'GenerateQR');
  });
  it('without DecimalPlace any finite amount passes', () => {
    expectOk(
      validateRequest(
        'Authorization',
        withMember(
          withMember(REQUESTS.Authorization, 'MachineInfo.DecimalPlace', undefined),
          'BasicInfo.Amount',
          1.2345,
        ),
      ),
      'no DecimalPlace',
    );
  });
});
