/**
 * The payment worker's deferred Intl.ListFormat (src/daemon/lazy-list-format.ts): the same answers
 * and the same errors as the real constructor, with the real formatter built only on first use.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { installLazyListFormat } from '../../src/daemon/lazy-list-format.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const Real = Intl.ListFormat;
installLazyListFormat();

test('a deferred formatter answers like the real one', T, () => {
  assert.notEqual(Intl.ListFormat, Real, 'installed');
  for (const options of [
    undefined,
    { style: 'long', type: 'conjunction' },
    { style: 'short', type: 'disjunction' },
    { style: 'narrow', type: 'unit', localeMatcher: 'lookup' },
  ] as const) {
    const lazy = new Intl.ListFormat('en', options);
    const real = new Real('en', options);
    assert.ok(lazy instanceof Intl.ListFormat && lazy instanceof Real);
    assert.equal(lazy.format(['a', 'b', 'c']), real.format(['a', 'b', 'c']));
    assert.deepEqual(lazy.formatToParts(['a', 'b']), real.formatToParts(['a', 'b']));
    assert.deepEqual(lazy.resolvedOptions(), real.resolvedOptions());
  }
  assert.equal(
    new Intl.ListFormat('de-DE', { type: 'disjunction' }).format(['x', 'y']),
    new Real('de-DE', { type: 'disjunction' }).format(['x', 'y']),
  );
});

test('invalid arguments still throw at construction, as the real constructor does', T, () => {
  assert.throws(() => new Intl.ListFormat('en', { type: 'bogus' } as never), RangeError);
  assert.throws(() => new Intl.ListFormat('en', { style: 'wide' } as never), RangeError);
  assert.throws(() => new Intl.ListFormat('not a locale!'), RangeError);
  assert.throws(() => new Intl.ListFormat('en-12'), RangeError);
  // Not deferred (uncertain arguments), but still a working formatter.
  assert.equal(new Intl.ListFormat(['en'], { type: 'conjunction' }).format(['a', 'b']), 'a and b');
  // A formatter's methods need a formatter: the real brand check, not a silent answer.
  assert.throws(() => Intl.ListFormat.prototype.format.call({}, ['a']), TypeError);
});

test('a subclass gets a real formatter of its own class', T, () => {
  class Mine extends Intl.ListFormat {}
  const mine = new Mine('en');
  assert.ok(mine instanceof Mine);
  assert.equal(mine.format(['a', 'b']), 'a and b');
});
