/** Request builders: schema-valid bodies, config mapping, catalog defaults, PaymentInfo passed through untouched. */
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
import type { GatewayOperation } from '../../src/gateway/outcome.js';
import { loadConfig } from '../../src/config/load.js';
import { DEVICE, FIXED_NOW, sampleConfig } from './helpers.js';

const config = sampleConfig();
const b = createRequestBuilders(config, DEVICE, FIXED_NOW);
// Member order and an unknown-to-us value are kept: the gateway gets back exactly what it sent.
const issued = { Token: 'tok', SrvTranId: 'S-9', AuthAmount: 5, AuthSource: 'X', AuthCode: '000001' };

function valid(op: GatewayOperation, body: unknown): void {
  const r = validateRequest(op, body);
  assert.equal(r.ok, true, `${op}: ${JSON.stringify(r)}`);
}

describe('request builders', () => {
  it('every operation builds a body valid against its schema', () => {
    valid('Authorization', b.authorization({ txId: 'tx-1aaaaaaa', amount: 5 }));
    valid('Authorization', b.authorization({ txId: 'tx-1aaaaaaa', amount: 5, ageLimit: 18 }));
    valid('Settlement', b.settlement({ txId: 'tx-1aaaaaaa', amount: 3, paymentInfo: issued, products: [{ item: 12, price: 1.5 }, { item: 99, price: 1.5 }] }));
    valid('Cancel', b.cancel({ txId: 'tx-1aaaaaaa', amount: 5, paymentInfo: gatewayTimeoutPaymentInfo(), reasonCode: ReasonCodes.CancelledByMachine }));
    valid('GenerateQR', b.generateQR({ txId: 'tx-2aaaaaaa', amount: 2.2, products: [{ item: 30, price: 2.2 }] }));
    const pi = paymentInfoFromGenerateQR({ QRData: { SrvTranId: 'Q1', RRN: 'R1' } }, 2.2);
    valid('Inquiry', b.inquiry({ txId: 'tx-2aaaaaaa', amount: 2.2, paymentInfo: pi, attempt: 1, isLast: true, products: [{ item: 30, price: 2.2 }] }));
    valid('Void', b.void({ txId: 'tx-2aaaaaaa', amount: 2.2, paymentInfo: pi, reasonCode: ReasonCodes.CancelledByConsumer }));
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
    assert.equal(auth.MachineInfo?.Offset, utcOffset(FIXED_NOW()));
    assert.deepEqual(auth.MachineInfo?.Country, { Alpha2Code: 'AT', Alpha3Code: 'AUT', NumericCode: '040', Name: 'Austria', Intra: 'EU' });
    assert.deepEqual(auth.ActorInfo, { Id: 42, MerchantId: 'M-1', Name: 'Snacks Ltd', OperatorId: 7, MCC: 5814 });
    assert.deepEqual(auth.DeviceInfo, { FWVersion: DEVICE.fwVersion, HwSerial: DEVICE.hwSerial, Type: 'qrvend' });
    assert.deepEqual(auth.CustomData, { Machine: '{"slot":"A"}' });
    const withTerminal = createRequestBuilders({ ...config, machine: { ...config.machine, terminalId: 'T-77' } }, DEVICE, FIXED_NOW);
    assert.equal(withTerminal.authorization({ txId: 't', amount: 1 }).MachineInfo?.TerminalId, 'T-77');
  });

  it('products come from the catalog, with defaults for unknown items', () => {
    const s = b.settlement({ txId: 't', amount: 3.5, paymentInfo: issued, products: [{ item: 12, price: 1.5 }, { item: 99, price: 2 }] });
    assert.deepEqual(s.Products, [
      { Code: 12, Price: 1.5, Name: 'Water 0.5l', Measurement: 500, UnitOfMeasurement: 'ml' },
      { Code: 99, Price: 2, Name: 'Item 99', Measurement: 1, UnitOfMeasurement: 'Unit' },
    ]);
    const q = b.generateQR({ txId: 't', amount: 2.2, products: [{ item: 30, price: 2.2 }] });
    assert.equal(q.BasicInfo.AgeLimitation, 18, 'the catalog age limit goes to BasicInfo.AgeLimitation');
    assert.equal(q.ChannelId, 'CH-1');
    assert.equal(q.Product?.[0]?.Name, 'Beer');
  });

  it('PaymentInfo goes back exactly as the gateway returned it', () => {
    const s = b.settlement({ txId: 't', amount: 3, paymentInfo: issued, products: [] });
    assert.equal(JSON.stringify(s.PaymentInfo), JSON.stringify(issued));
    const c = b.cancel({ txId: 't', amount: 5, paymentInfo: issued, reasonCode: ReasonCodes.CancelledByConsumer });
    assert.equal(JSON.stringify(c.PaymentInfo), JSON.stringify(issued));
    assert.equal(JSON.stringify(b.cancel({ txId: 't', amount: 5, paymentInfo: gatewayTimeoutPaymentInfo(), reasonCode: 0 }).PaymentInfo), '{"IsGatewayTimeout":true}');
  });

  it('Cancel/Void reason codes and texts', () => {
    const c = b.cancel({ txId: 't', amount: 5, paymentInfo: issued, reasonCode: ReasonCodes.CancelledByConsumer });
    assert.deepEqual([c.ReasonCode, c.ReasonText], [2, 'cancelled by consumer']);
    const v = b.void({ txId: 't', amount: 5, paymentInfo: issued, reasonCode: ReasonCodes.CancelledByMachine, reasonText: 'vend failed' });
    assert.deepEqual([v.ReasonCode, v.ReasonText], [3, 'vend failed']);
    assert.equal(b.void({ txId: 't', amount: 5, paymentInfo: issued, reasonCode: 0, reasonText: 'z'.repeat(300) }).ReasonText?.length, 255);
  });

  it('Inquiry carries Polling and the PaymentInfo composed from GenerateQR', () => {
    const pi = paymentInfoFromGenerateQR({ QRData: { ChannelId: 'CH-1', SrvTranId: 'Q1', RRN: 'R1' } }, 2.2);
    assert.deepEqual(pi, { SrvTranId: 'Q1', RRN: 'R1', AuthAmount: 2.2 });
    const i = b.inquiry({ txId: 't', amount: 2.2, paymentInfo: pi, attempt: 3, isLast: false, products: [] });
    assert.deepEqual(i.Polling, { IsLastPolling: false, PollingAttemptCounter: 3 });
  });

  it('CustomData leaves out members config does not set', () => {
    assert.equal(buildCustomData({ ...config, customData: {} }), null);
    assert.deepEqual(buildCustomData({ ...config, customData: { Actor: '{}', Operator: '"op"' } }), { Actor: '{}', Operator: '"op"' });
  });

  it('utcOffset formats the local offset', () => {
    assert.match(utcOffset(new Date()), /^[+-]\d{2}:\d{2}$/);
  });
});
