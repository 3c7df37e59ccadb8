/** The per-machine bounds' bookkeeping (src/relay/breaker.ts): cap, breaker, probe; time fed in. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MachineBounds } from '../../src/relay/breaker.js';

test(
  'the cap holds per machine; silence opens the breaker, a probe after openMs closes it on an answer',
  { timeout: 5_000 },
  () => {
    const b = new MachineBounds({ maxInFlight: 2, failures: 2, openMs: 1_000 });
    assert.ok(b.admit('A', 0).admit && b.admit('A', 0).admit);
    assert.deepEqual(b.admit('A', 0), { admit: false, reason: 'machine-busy' });
    assert.ok(b.admit('B', 0).admit, 'another machine has its own slots');
    b.release('A', 'silent', 10);
    b.release('A', 'silent', 10);
    assert.deepEqual(b.admit('A', 20), { admit: false, reason: 'breaker-open' });
    assert.equal(b.openCount(20), 1);
    // After openMs one Start probes; others wait for its outcome.
    assert.ok(b.admit('A', 1_100).admit);
    assert.deepEqual(b.admit('A', 1_100), { admit: false, reason: 'breaker-open' });
    b.release('A', 'answered', 1_200);
    assert.ok(b.admit('A', 1_200).admit);
    assert.equal(b.openCount(1_200), 0);
  },
);

test('a broker away or an overload says nothing about the machine: no breaker opens', { timeout: 5_000 }, () => {
  const b = new MachineBounds({ maxInFlight: 8, failures: 1, openMs: 1_000 });
  for (let i = 0; i < 5; i++) {
    assert.ok(b.admit('A', i).admit);
    b.release('A', 'neutral', i);
  }
  assert.equal(b.opened, 0);
  assert.ok(b.admit('A', 10).admit);
});
