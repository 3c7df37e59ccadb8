/**
 * Request builders: schema-valid bodies, config mapping, catalog defaults,
 * PaymentInfo passed through untouched, exact bytes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildCustomData,
  createRequestBuilders,
  gatewayTimeoutPaymentInfo,
  paymentInfoFromGenerateQR,
  utcOffset,
} from '../../src/gateway/envelope.js';
import { ReasonCodes, validateRequest } from '../../src/gateway/protocol/index.js';
import { encodeRequest, RawJson } from '../../src/gateway/wire/index.js';
import type { GatewayOperation } from '../../src/gateway/outcome.js';
import { loadConfig } from '../../src/config/load.js';
import { DEVICE, FIXED_NOW, sampleConfig } from './helpers.js';

const config = sampleConfig();
const b = createRequestBuilders(config, DEVICE, FIXED_NOW);
// Member order, spacing, `5.00` and an unknown-to-us value are kept: the gateway gets back exactly what it sent.
const ISSUED_TEXT = '{"Token":"tok", "SrvTranId":"S-9","AuthAmount":5.00,"AuthSource":"X","AuthCode":"000001"}';
const issued = new RawJson(ISSUED_TEXT);
/** What a closing request repeats from its authorization. */
const closes = { machineAuTime: '010326090000', ageLimit: null };

/**
 * Runs `fn` with the process in time zone `tz` (Node re-reads TZ when it is assigned), so an
 * offset can be checked against a known value instead of the function that computes it.
 */
function inTimeZone<T>(tz: string, fn: () => T): T {
  const was = process.env.TZ;
  process.env.TZ = tz;
  try {
    return fn();
  } finally {
    if (was === undefined) delete process.env.TZ;
    else process.env.TZ = was;
  }
}

/** The body as sent on the wire validates against the operation's schema. */
function valid(op: GatewayOperation, body: object): void {
  const r = validateRequest(op, JSON.parse(encodeRequest(body)));
  assert.equal(r.ok, true, `${op}: ${JSON.stringify(r)}`);
}

describe('request builders', () => {
  it('every operation builds a body valid against its schema', () => {
    valid('Authorization', b.authorization({ txId: 'tx-1aaaaaaa', amount: 5 }));
    valid('Authorization', b.authorization({ txId: 'tx-1aaaaaaa', amount: 5, ageLimit: 18 }));
    valid(
      'Settlement',
      b.settlement({
        txId: 'tx-1aaaaaaa',
        amount: 3,
        paymentInfo: issued,
        products: [
          { item: 12, price: 1.5 },
          { item: 99, price: 1.5 },
        ],
        ...closes,
      }),
    );
    valid(
      'Cancel',
      b.cancel({
        txId: 'tx-1aaaaaaa',
        amount: 5,
        paymentInfo: gatewayTimeoutPaymentInfo(),
        reasonCode: ReasonCodes.CancelledByMachine,
        ...closes,
      }),
    );
    valid('GenerateQR', b.generateQR({ txId: 'tx-2aaaaaaa', amount: 2.2, products: [{ item: 30, price: 2.2 }] }));
    const pi = paymentInfoFromGenerateQR({ QRData: { SrvTranId: 'Q1', RRN: 'R1' } }, 2.2, 2);
    valid(
      'Inquiry',
      b.inquiry({
        txId: 'tx-2aaaaaaa',
        amount: 2.2,
        paymentInfo: pi,
        attempt: 1,
        isLast: true,
        products: [{ item: 30, price: 2.2 }],
      }),
    );
    valid(
      'Void',
      b.void({
        txId: 'tx-2aaaaaaa',
        amount: 2.2,
        paymentInfo: pi,
        reasonCode: ReasonCodes.CancelledByConsumer,
        ...closes,
      }),
    );
  });

  it('the default configuration (no catalog, nulls everywhere) builds valid bodies too', () => {
    const plain = createRequestBuilders(loadConfig({ env: {} }).config, DEVICE, FIXED_NOW);
    const auth = plain.authorization({ txId: 'tx-3aaaaaaa', amount: 5 });
    valid('Authorization', auth);
    assert.equal('CustomData' in auth, false, 'no CustomData member when config sets none');
    assert.equal(auth.ActorInfo?.Name, undefined, 'null config values are left out');
    valid('GenerateQR', plain.generateQR({ txId: 'tx-3aaaaaaa', amount: 1, products: [{ item: 5, price: 1 }] }));
  });

  it('BasicInfo: currency, machine time, amount rounded to the decimal places', () => {
    const auth = b.authorization({ txId: 'tx-1aaaaaaa', amount: 1.005 });
    assert.deepEqual(auth.BasicInfo, {
      TransactionId: 'tx-1aaaaaaa',
      Amount: 1.01,
      CurrencyCode: 'EUR',
      CurrencyNumeric: '978',
      MachineAuTime: '050326140709',
    });
    assert.equal(b.authorization({ txId: 't', amount: 5, ageLimit: 18 }).BasicInfo.AgeLimitation, 18);
  });

  it('MachineInfo, ActorInfo, DeviceInfo, CustomData from config and device facts', () => {
    const auth = b.authorization({ txId: 'tx-1aaaaaaa', amount: 5 });
    assert.equal(auth.MachineInfo?.TerminalId, DEVICE.hwSerial, 'TerminalId falls back to the HwSerial');
    assert.equal(auth.MachineInfo?.DecimalPlace, 2);
    assert.equal(auth.MachineInfo?.Id, 4711);
    assert.equal(
      inTimeZone('Europe/Vienna', () => b.authorization({ txId: 't', amount: 1 }).MachineInfo?.Offset),
      '+01:00',
      'Vienna in March (no summer time yet)',
    );
    assert.deepEqual(auth.MachineInfo?.Country, {
      Alpha2Code: 'AT',
      Alpha3Code: 'AUT',
      NumericCode: '040',
      Name: 'Austria',
      Intra: 'EU',
    });
    assert.deepEqual(auth.ActorInfo, { Id: 42, MerchantId: 'M-1', Name: 'Snacks Ltd', OperatorId: 7, MCC: 5814 });
    assert.deepEqual(auth.DeviceInfo, { FWVersion: DEVICE.fwVersion, HwSerial: DEVICE.hwSerial, Type: 'qrvend' });
    assert.deepEqual(auth.CustomData, { Machine: '{"slot":"A"}' });
    const withTerminal = createRequestBuilders(
      { ...config, machine: { ...config.machine, terminalId: 'T-77' } },
      DEVICE,
      FIXED_NOW,
    );
    assert.equal(withTerminal.authorization({ txId: 't', amount: 1 }).MachineInfo?.TerminalId, 'T-77');
  });

  it('products come from the catalog, with defaults for unknown items', () => {
    const s = b.settlement({
      txId: 't',
      amount: 3.5,
      paymentInfo: issued,
      products: [
        { item: 12, price: 1.5 },
        { item: 99, price: 2 },
      ],
      ...closes,
    });
    assert.deepEqual(s.Products, [
      { Code: 12, Price: 1.5, Name: 'Water 0.5l', Measurement: 500, UnitOfMeasurement: 'ml' },
      { Code: 99, Price: 2, Name: 'Item 99', Measurement: 1, UnitOfMeasurement: 'Unit' },
    ]);
    const q = b.generateQR({ txId: 't', amount: 2.2, products: [{ item: 30, price: 2.2 }] });
    assert.equal(q.BasicInfo.AgeLimitation, 18, 'the catalog age limit goes to BasicInfo.AgeLimitation');
    assert.equal(q.ChannelId, 'CH-1');
    assert.equal(q.Product?.[0]?.Name, 'Beer');
  });

  it('PaymentInfo goes back exactly as the gateway returned it, byte for byte', () => {
    const s = encodeRequest(b.settlement({ txId: 't', amount: 3, paymentInfo: issued, products: [], ...closes }));
    assert.ok(s.includes(`"PaymentInfo":${ISSUED_TEXT}`), s);
    const c = encodeRequest(
      b.cancel({ txId: 't', amount: 5, paymentInfo: issued, reasonCode: ReasonCodes.CancelledByConsumer, ...closes }),
    );
    assert.ok(c.includes(`"PaymentInfo":${ISSUED_TEXT}`), c);
    const t = encodeRequest(
      b.cancel({ txId: 't', amount: 5, paymentInfo: gatewayTimeoutPaymentInfo(), reasonCode: 0, ...closes }),
    );
    assert.ok(t.includes('"PaymentInfo":{"IsGatewayTimeout":true}'), t);
  });

  it('amounts are written with the currency decimals: 5.00, 1.50, and 234.0 without decimals', () => {
    const s = encodeRequest(
      b.settlement({
        txId: 't',
        amount: 3.5,
        paymentInfo: issued,
        products: [
          { item: 12, price: 1.5 },
          { item: 99, price: 2 },
        ],
        ...closes,
      }),
    );
    assert.match(s, /"Amount":3\.50,/);
    assert.match(s, /"Code":12,"Price":1\.50,/);
    assert.match(s, /"Code":99,"Price":2\.00,/);
    assert.match(encodeRequest(b.authorization({ txId: 't', amount: 5 })), /"Amount":5\.00,/);
    const jpy = createRequestBuilders(
      { ...config, machine: { ...config.machine, decimalPlaces: 0, currencyCode: 'JPY', currencyNumeric: '392' } },
      DEVICE,
      FIXED_NOW,
    );
    const g = encodeRequest(jpy.generateQR({ txId: 't', amount: 234, products: [{ item: 12, price: 234 }] }));
    assert.match(g, /"Amount":234\.0,/);
    assert.match(g, /"Price":234\.0,/);
    assert.match(g, /"DecimalPlace":0/);
    const pi = paymentInfoFromGenerateQR({ QRData: { SrvTranId: 'Q1', RRN: 'R1' } }, 234, 0);
    assert.equal(pi.text, '{"SrvTranId":"Q1","RRN":"R1","AuthAmount":234.0}');
  });

  it(
    'MachineAuTime: now for Authorization, GenerateQR, Inquiry; ' +
      'the authorization time for Settlement, Cancel, Void',
    () => {
      assert.equal(b.authorization({ txId: 't', amount: 5 }).BasicInfo.MachineAuTime, '050326140709');
      assert.equal(
        b.authorization({ txId: 't', amount: 5, at: new Date(2026, 0, 2, 3, 4, 5) }).BasicInfo.MachineAuTime,
        '020126030405',
      );
      const pi = paymentInfoFromGenerateQR({ QRData: { SrvTranId: 'Q1', RRN: 'R1' } }, 2.2, 2);
      assert.equal(
        b.inquiry({ txId: 't', amount: 2.2, paymentInfo: pi, attempt: 1, isLast: false, products: [] }).BasicInfo
          .MachineAuTime,
        '050326140709',
      );
      const auth = { machineAuTime: '050326130000', ageLimit: 18 };
      for (const body of [
        b.settlement({ txId: 't', amount: 3, paymentInfo: issued, products: [], ...auth }),
        b.cancel({ txId: 't', amount: 5, paymentInfo: issued, reasonCode: 3, ...auth }),
        b.void({ txId: 't', amount: 5, paymentInfo: issued, reasonCode: 3, ...auth }),
      ]) {
        assert.equal(body.BasicInfo.MachineAuTime, '050326130000', 'the time of the authorization, not of the request');
        assert.equal(body.BasicInfo.AgeLimitation, 18, 'the AgeLimitation of the authorization is repeated');
      }
    },
  );

  it('Cancel/Void reason codes and texts', () => {
    const c = b.cancel({
      txId: 't',
      amount: 5,
      paymentInfo: issued,
      reasonCode: ReasonCodes.CancelledByConsumer,
      ...closes,
    });
    assert.deepEqual([c.ReasonCode, c.ReasonText], [2, 'cancelled by consumer']);
    const v = b.void({
      txId: 't',
      amount: 5,
      paymentInfo: issued,
      reasonCode: ReasonCodes.CancelledByMachine,
      reasonText: 'vend failed',
      ...closes,
    });
    assert.deepEqual([v.ReasonCode, v.ReasonText], [3, 'vend failed']);
    assert.equal(
      b.void({ txId: 't', amount: 5, paymentInfo: issued, reasonCode: 0, reasonText: 'z'.repeat(300), ...closes })
        .ReasonText?.length,
      255,
    );
  });

  it('ReasonText is cut at a code point: 254 x "a" + an emoji never ends in a lone surrogate', () => {
    const v = b.void({
      txId: 't',
      amount: 5,
      paymentInfo: issued,
      reasonCode: 3,
      reasonText: `${'a'.repeat(254)}\u{1F600}tail`,
      ...closes,
    });
    assert.equal(v.ReasonText, 'a'.repeat(254), 'the emoji (2 UTF-16 units) does not fit in 255: it is left out whole');
    const fits = b.void({
      txId: 't',
      amount: 5,
      paymentInfo: issued,
      reasonCode: 3,
      reasonText: `${'a'.repeat(253)}\u{1F600}tail`,
      ...closes,
    });
    assert.equal(fits.ReasonText, `${'a'.repeat(253)}\u{1F600}`);
    assert.equal(fits.ReasonText?.length, 255);
  });

  it('Inquiry carries Polling and the PaymentInfo composed from GenerateQR', () => {
    const pi = paymentInfoFromGenerateQR({ QRData: { ChannelId: 'CH-1', SrvTranId: 'Q1', RRN: 'R1' } }, 2.2, 2);
    assert.equal(pi.text, '{"SrvTranId":"Q1","RRN":"R1","AuthAmount":2.20}');
    const i = b.inquiry({ txId: 't', amount: 2.2, paymentInfo: pi, attempt: 3, isLast: false, products: [] });
    assert.deepEqual(i.Polling, { IsLastPolling: false, PollingAttemptCounter: 3 });
  });

  it('CustomData leaves out members config does not set', () => {
    assert.equal(buildCustomData({ ...config, customData: {} }), null);
    assert.deepEqual(buildCustomData({ ...config, customData: { Actor: '{}', Operator: '"op"' } }), {
      Actor: '{}',
      Operator: '"op"',
    });
  });

  it('MachineInfo.Offset is the local UTC offset at that instant, summer time and odd zones included', () => {
    const cases: Array<[tz: string, at: string, offset: string]> = [
      ['UTC', '2026-03-05T14:07:09Z', '+00:00'],
      ['Europe/Vienna', '2026-03-05T14:07:09Z', '+01:00'],
      ['Europe/Vienna', '2026-07-01T12:00:00Z', '+02:00'],
      ['America/Los_Angeles', '2026-07-01T12:00:00Z', '-07:00'],
      ['America/St_Johns', '2026-03-05T14:07:09Z', '-03:30'],
      ['Asia/Kolkata', '2026-03-05T14:07:09Z', '+05:30'],
      ['Asia/Kathmandu', '2026-03-05T14:07:09Z', '+05:45'],
      ['Pacific/Chatham', '2026-03-05T14:07:09Z', '+13:45'],
    ];
    for (const [tz, at, offset] of cases) {
      const now = () => new Date(at);
      assert.equal(
        inTimeZone(tz, () => utcOffset(now())),
        offset,
        `${tz} at ${at}`,
      );
      const built = inTimeZone(tz, () =>
        createRequestBuilders(config, DEVICE, now).authorization({ txId: 't', amount: 1 }),
      );
      assert.equal(built.MachineInfo?.Offset, offset, `MachineInfo.Offset in ${tz} at ${at}`);
    }
  });

  it('a configured machine.offset is sent as it is, whatever the local zone', () => {
    const fixed = createRequestBuilders(
      { ...config, machine: { ...config.machine, offset: '+03:00' } },
      DEVICE,
      FIXED_NOW,
    );
    assert.equal(
      inTimeZone('America/Los_Angeles', () => fixed.authorization({ txId: 't', amount: 1 }).MachineInfo?.Offset),
      '+03:00',
    );
  });
});
