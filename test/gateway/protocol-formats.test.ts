/** The protocol's helpers: date-time formatting, amount rounding, member paths, Status builders. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  declinedStatus,
  formatGatewayDateTime,
  hasDecimalPlaces,
  isGatewayDateTime,
  memberPath,
  roundAmount,
  StatusSchema,
  DeclineCodes,
} from '../../src/gateway/protocol/index.js';

describe('formatGatewayDateTime', () => {
  it('writes ddMMyyHHmmss in local time', () => {
    assert.equal(formatGatewayDateTime(new Date(2026, 2, 5, 14, 7, 9)), '050326140709');
    assert.equal(formatGatewayDateTime(new Date(2031, 11, 31, 23, 59, 59)), '311231235959');
    assert.equal(formatGatewayDateTime(new Date(2000, 0, 1, 0, 0, 0)), '010100000000');
  });
  it('always produces a valid gateway date-time', () => {
    for (let i = 0; i < 200; i++) {
      const d = new Date(Date.UTC(2000, 0, 1) + i * 1_234_567_891);
      assert.ok(isGatewayDateTime(formatGatewayDateTime(d)), d.toISOString());
    }
  });
});

describe('roundAmount', () => {
  it('rounds half away from zero without binary noise', () => {
    assert.equal(roundAmount(1.005, 2), 1.01);
    assert.equal(roundAmount(2.675, 2), 2.68);
    assert.equal(roundAmount(1.004, 2), 1);
    assert.equal(roundAmount(0.1 + 0.2, 2), 0.3);
    assert.equal(roundAmount(234, 0), 234);
    assert.equal(roundAmount(2.5, 0), 3);
    assert.equal(roundAmount(1.2345, 3), 1.235);
    assert.equal(roundAmount(-1.005, 2), -1.01);
    assert.ok(Object.is(roundAmount(-0.001, 2), 0));
  });
  it('refuses an impossible number of decimal places', () => {
    assert.throws(() => roundAmount(1, -1), RangeError);
    assert.throws(() => roundAmount(1, 1.5), RangeError);
  });
  it('hasDecimalPlaces', () => {
    assert.equal(hasDecimalPlaces(1.5, 1), true);
    assert.equal(hasDecimalPlaces(1.55, 1), false);
    assert.equal(hasDecimalPlaces(0.3, 2), true);
  });
});

describe('memberPath and Status builders', () => {
  it('writes member paths with array indexes', () => {
    assert.equal(memberPath(['Products', 0, 'Price']), 'Products[0].Price');
    assert.equal(memberPath([]), '');
  });
  it('declinedStatus mirrors the code and clips long messages to 255', () => {
    const s = declinedStatus(DeclineCodes.ValidationError, 'x'.repeat(400));
    assert.equal(s.Code, 998);
    assert.equal(s.CustomDeclineCode, 998);
    assert.equal(s.StatusMessage?.length, 255);
    assert.equal(StatusSchema.safeParse(s).success, true);
  });
});
