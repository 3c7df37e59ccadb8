/**
 * The exact bytes on the wire: raw JSON fragments, a member's text as
 * received, amounts read and written without floating point.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  amountText,
  authAmountOf,
  exactMinor,
  memberText,
  minorOf,
  RawJson,
  receivedPaymentInfo,
  stringifyWire,
  wireAmount,
} from '../../src/gateway/wire/index.js';
import { truncateText } from '../../src/gateway/protocol/index.js';

describe('stringifyWire and RawJson', () => {
  it('writes plain data like JSON.stringify (undefined members left out)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => assert.equal(stringifyWire(v), JSON.stringify(v))),
      { numRuns: 300, seed: 14 },
    );
    assert.equal(stringifyWire({ a: 1, b: undefined, c: [1, undefined] }), '{"a":1,"c":[1,null]}');
  });

  it('writes a RawJson as its text, anywhere; refuses text that is not one JSON value', () => {
    assert.equal(
      stringifyWire({ Amount: new RawJson('5.00'), PaymentInfo: new RawJson('{ "AuthAmount" : 5.00 }') }),
      '{"Amount":5.00,"PaymentInfo":{ "AuthAmount" : 5.00 }}',
    );
    assert.throws(() => new RawJson('5.00,6'));
    assert.equal(JSON.stringify({ x: new RawJson('1.50') }), '{"x":1.5}', 'plain JSON.stringify (logs) sees the value');
  });
});

describe('memberText', () => {
  it('returns the member as it was written: spacing, number form, escapes, order inside', () => {
    const text =
      '{ "Status" : {"Verdict":"Approved"} , "PaymentInfo" : {"B":"x\\"}","AuthAmount":5.00 ,"A":[1,{"z":"]"}]} }';
    assert.equal(memberText(text, 'PaymentInfo'), '{"B":"x\\"}","AuthAmount":5.00 ,"A":[1,{"z":"]"}]}');
    assert.equal(memberText(text, 'Status'), '{"Verdict":"Approved"}');
    assert.equal(memberText(text, 'Missing'), null);
    assert.equal(memberText('{"a":1e2,"b":-0.50}', 'b'), '-0.50');
    assert.equal(
      memberText('{"\\u0050aymentInfo":{"x":1}}', 'PaymentInfo'),
      '{"x":1}',
      'escaped member names are decoded',
    );
    assert.equal(memberText('{"a":1,"a":2}', 'a'), '2', 'the last duplicate wins, as with JSON.parse');
  });

  it('agrees with JSON.parse on any object', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const text = JSON.stringify(obj, null, 1);
        for (const key of Object.keys(obj)) assert.deepEqual(JSON.parse(memberText(text, key)!), obj[key]);
      }),
      { numRuns: 200, seed: 15 },
    );
  });

  it('receivedPaymentInfo keeps the member text of the answer; null when absent or null', () => {
    const bodyText = '{"PaymentInfo":{"AuthAmount":5.00,"SrvTranId":"S"},"Status":{"Verdict":"Approved"}}';
    assert.equal(receivedPaymentInfo({ response: {}, bodyText })?.text, '{"AuthAmount":5.00,"SrvTranId":"S"}');
    assert.equal(receivedPaymentInfo({ response: {}, bodyText: '{"PaymentInfo":null,"Status":{}}' }), null);
    assert.equal(receivedPaymentInfo({ response: {}, bodyText: '{"Status":{}}' }), null);
  });
});

describe('amounts', () => {
  it('written with the currency decimals, at least one', () => {
    assert.deepEqual(
      [
        amountText(500, 2),
        amountText(150, 2),
        amountText(234, 0),
        amountText(5, 2),
        amountText(1234, 3),
        amountText(0, 2),
      ],
      ['5.00', '1.50', '234.0', '0.05', '1.234', '0.00'],
    );
    assert.equal(wireAmount(0.29, 2).text, '0.29');
    assert.equal(wireAmount(1.005, 2).text, '1.01', 'half away from zero after removing binary noise');
    assert.equal(minorOf(0.29, 2), 29);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 0, max: 3 }), (minor, dp) => {
        assert.equal(exactMinor(amountText(minor, dp), dp)?.minor, BigInt(minor));
      }),
      { numRuns: 300, seed: 16 },
    );
  });

  it('read exactly from the text: no float drift, extra decimals cut down and flagged', () => {
    assert.deepEqual(exactMinor('0.29', 2), { minor: 29n, exact: true });
    assert.deepEqual(exactMinor('1.499', 2), { minor: 149n, exact: false });
    assert.deepEqual(
      exactMinor('1.4999999999999999', 2),
      { minor: 149n, exact: false },
      'a double would read this as 1.5',
    );
    assert.deepEqual(exactMinor('15e-1', 2), { minor: 150n, exact: true });
    assert.deepEqual(exactMinor('1E21', 2), { minor: 10n ** 23n, exact: true });
    assert.deepEqual(exactMinor('234', 0), { minor: 234n, exact: true });
    assert.equal(exactMinor('"5"', 2), null);
    assert.deepEqual(authAmountOf(new RawJson('{"AuthAmount":0.50}'), 2), { minor: 50n, exact: true });
    assert.equal(authAmountOf(new RawJson('{"SrvTranId":"x"}'), 2), null);
  });
});

describe('truncateText', () => {
  it('cuts at code points, counting UTF-16 units', () => {
    const emoji = '\u{1F600}';
    assert.equal(truncateText(`${'a'.repeat(254)}${emoji}`, 255), 'a'.repeat(254));
    assert.equal(truncateText(`${'a'.repeat(253)}${emoji}b`, 255), `${'a'.repeat(253)}${emoji}`);
    assert.equal(truncateText(`${'a'.repeat(253)}${emoji}b`, 255, true), `${'a'.repeat(253)}…`);
    assert.equal(truncateText('short', 255), 'short');
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.integer({ min: 1, max: 300 }), (s, max) => {
        const out = truncateText(s, max);
        assert.ok(out.length <= max);
        assert.ok(s.startsWith(out));
        assert.doesNotMatch(out, /[\uD800-\uDBFF]$/, 'never ends in a lone high surrogate');
      }),
      { numRuns: 300, seed: 17 },
    );
  });
});
