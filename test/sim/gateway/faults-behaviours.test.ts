/** Fault flags, seeded determinism and limits; the deterministic amount table. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FaultInjector, parseFaultFlag } from '../../../src/sim/gateway/faults.js';
import { amountBehaviour, Behaviours } from '../../../src/sim/gateway/behaviours.js';
import { isQrvendError } from '../../../src/core/errors.js';

describe('fault flags', () => {
  it('parses KIND:RATE[:Op,Op]', () => {
    assert.deepEqual(parseFaultFlag('http500:0.5'), { kind: 'http500', rate: 0.5 });
    assert.deepEqual(parseFaultFlag('reset-after:1:Settlement,Cancel'), {
      kind: 'reset-after',
      rate: 1,
      ops: ['Settlement', 'Cancel'],
    });
  });
  it('refuses unknown kinds, bad rates and unknown operations with a usage error', () => {
    for (const bad of ['boom:0.1', 'hang:2', 'hang:-0.1', 'hang:', 'hang', 'hang:0.1:Sale', 'hang:0.1:Void:x']) {
      assert.throws(
        () => parseFaultFlag(bad),
        (e: unknown) => isQrvendError(e, 'CLI_USAGE'),
        bad,
      );
    }
  });
});

describe('fault injector', () => {
  const draws = (seed: number) => {
    const f = new FaultInjector([{ kind: 'hang', rate: 0.3 }], seed);
    return Array.from({ length: 200 }, () => f.draw('Settlement'));
  };
  it('the same seed gives the same faults; another seed other ones', () => {
    assert.deepEqual(draws(42), draws(42));
    assert.notDeepEqual(draws(42), draws(43));
  });
  it('rate is respected roughly, 0 never fires, 1 always does', () => {
    const hits = draws(5).filter((d) => d !== null).length;
    assert.ok(hits > 30 && hits < 90, `30% of 200 expected, got ${hits}`);
    const never = new FaultInjector([{ kind: 'http500', rate: 0 }], 1);
    assert.equal(Array.from({ length: 100 }, () => never.draw('Cancel')).filter(Boolean).length, 0);
  });
  it('ops filter and times limit', () => {
    const f = new FaultInjector([{ kind: 'not-json', rate: 1, ops: ['Void'], times: 2 }], 1);
    assert.equal(f.draw('Settlement'), null);
    assert.deepEqual([f.draw('Void'), f.draw('Void'), f.draw('Void')], ['not-json', 'not-json', null]);
    assert.equal(f.counts['not-json'], 2);
  });
});

describe('behaviours', () => {
  it('the amount table', () => {
    assert.deepEqual(amountBehaviour('Authorization', 9.05), { kind: 'decline', code: 5 });
    // 9.50: code 50, unknown machine
    assert.deepEqual(amountBehaviour('Authorization', 9.5), { kind: 'decline', code: 50 });
    assert.deepEqual(amountBehaviour('Authorization', 9.3), { kind: 'decline', code: 30 });
    assert.deepEqual(amountBehaviour('Authorization', 9.11), { kind: 'approve' }, '11 is not a decline code');
    assert.deepEqual(amountBehaviour('Settlement', 8.04), { kind: 'decline', code: 4 });
    assert.deepEqual(amountBehaviour('Authorization', 8.04), { kind: 'approve' });
    assert.deepEqual(amountBehaviour('GenerateQR', 9.01), { kind: 'decline', code: 1 });
    assert.deepEqual(amountBehaviour('GenerateQR', 8.01), { kind: 'decline-at-inquiry', code: 1 });
    assert.deepEqual(amountBehaviour('GenerateQR', 7.77), { kind: 'never-pay' });
    assert.deepEqual(amountBehaviour('GenerateQR', 7.03), { kind: 'pay-after-polls', polls: 3 });
    assert.deepEqual(amountBehaviour('GenerateQR', 1.5), { kind: 'approve' });
  });
  it('rules come first, match on op/transaction/amount and are used up after `times`', () => {
    const b = new Behaviours();
    b.setRules([{ op: 'Authorization', amount: 1, times: 1, behaviour: { kind: 'decline', code: 3 } }]);
    assert.deepEqual(b.decide('Authorization', 't', 2), { kind: 'approve' });
    assert.deepEqual(b.decide('Settlement', 't', 1), { kind: 'approve' });
    assert.deepEqual(b.decide('Authorization', 't', 1), { kind: 'decline', code: 3 });
    assert.deepEqual(b.decide('Authorization', 't', 1), { kind: 'approve' });
  });
});
