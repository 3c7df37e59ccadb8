/**
 * The ledger's own money guards, called directly: amounts become integer minor units only when
 * they fit the currency (src/ledger/money.ts), and a Settlement is recorded only when its body
 * names the transaction and carries the sum and the count of the successful vends
 * (src/ledger/body-check.ts). Either one failing open would let a wrong amount be sent and retried.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isQrvendError } from '../../src/core/errors.js';
import { checkBody } from '../../src/ledger/body-check.js';
import { toMajor, toMajorOrNull, toMinor, toMinorOrNull } from '../../src/ledger/money.js';

const refusedWith = (pattern: RegExp) => (err: unknown) =>
  isQrvendError(err) && err.code === 'INTERNAL' && pattern.test(err.message);

test('toMinor: exact amounts in 0, 2 and 3 decimal places, including those that do not multiply exactly', () => {
  assert.equal(toMinor(0.29, 2, 'x'), 29);
  assert.equal(toMinor(4.35, 2, 'x'), 435);
  assert.equal(toMinor(1.15, 2, 'x'), 115);
  assert.equal(toMinor(120, 0, 'x'), 120);
  assert.equal(toMinor(1.005, 3, 'x'), 1005);
  assert.equal(toMinor(0, 2, 'x'), 0);
});

test('toMinor refuses what does not fit: more places, negative, not finite, too large', () => {
  for (const [amount, dp] of [
    [0.291, 2],
    [1.5, 0],
    [-0.01, 2],
    [NaN, 2],
    [Infinity, 2],
    [2 ** 53, 2],
  ] as const) {
    assert.throws(
      () => toMinor(amount, dp, 'BasicInfo.Amount'),
      refusedWith(/^BasicInfo\.Amount .* is not a non-negative amount with at most \d decimal places$/),
      `${amount} at ${dp}`,
    );
  }
});

test('toMajor and the null-passing variants', () => {
  assert.equal(toMajor(29, 2), 0.29);
  assert.equal(toMajor(5475, 3), 5.475);
  assert.equal(toMajor(7, 0), 7);
  assert.equal(toMinorOrNull(null, 2, 'x'), null);
  assert.equal(toMinorOrNull(4.35, 2, 'x'), 435);
  assert.equal(toMajorOrNull(null, 2), null);
  assert.equal(toMajorOrNull(435, 2), 4.35);
});

const TX = 'TX-BODY-0001';
const settlement = (amount: unknown, products: unknown[], txId: unknown = TX) =>
  JSON.stringify({ BasicInfo: { TransactionId: txId, Amount: amount }, Products: products });
const expect3 = { amountMinor: 579, decimalPlaces: 2, products: 3 };

test('checkBody accepts a Settlement with the sum and one product per successful vend', () => {
  assert.doesNotThrow(() => checkBody('Settlement', TX, settlement(5.79, [1, 2, 3]), expect3));
  // Without an expectation only the TransactionId is checked (Cancel, Void).
  assert.doesNotThrow(() => checkBody('Cancel', TX, JSON.stringify({ BasicInfo: { TransactionId: TX } })));
});

test('checkBody refuses: not JSON, not an object, another transaction, wrong amount, wrong count', () => {
  assert.throws(
    () => checkBody('Cancel', TX, 'not json'),
    refusedWith(/^refused to record a Cancel for TX-BODY-0001: the body is not JSON$/),
  );
  assert.throws(
    () => checkBody('Cancel', TX, 'null'),
    refusedWith(/BasicInfo\.TransactionId does not name this transaction/),
  );
  assert.throws(
    () => checkBody('Void', TX, '{}'),
    refusedWith(/BasicInfo\.TransactionId does not name this transaction/),
  );
  assert.throws(
    () => checkBody('Void', TX, JSON.stringify({ BasicInfo: { TransactionId: 'TX-OTHER' } })),
    refusedWith(/does not name this transaction/),
  );
  assert.throws(
    () => checkBody('Settlement', TX, settlement(5.78, [1, 2, 3]), expect3),
    refusedWith(/BasicInfo\.Amount 5\.78 is not the sum of the successful vends/),
  );
  assert.throws(
    () => checkBody('Settlement', TX, settlement('5.79', [1, 2, 3]), expect3),
    refusedWith(/is not the sum/),
  );
  assert.throws(
    () => checkBody('Settlement', TX, settlement(5.79, [1, 2]), expect3),
    refusedWith(/Products must hold one entry per successful vend \(3\)/),
  );
  assert.throws(
    () =>
      checkBody(
        'Settlement',
        TX,
        JSON.stringify({ BasicInfo: { TransactionId: TX, Amount: 5.79 }, Products: { length: 3 } }),
        expect3,
      ),
    refusedWith(/Products must hold/),
  );
});
