import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionGuard } from '../../src/start/connection-guard.js';
import { firstDuplicateMember } from '../../src/start/json-members.js';

const T = { timeout: 5_000 };

test('connection guard: one source holds at most perSource; others are still admitted', T, () => {
  const guard = new ConnectionGuard({ total: 10, perSource: 3, suspectShare: 0.5, suspectForMs: 1_000 });
  for (let i = 0; i < 3; i += 1) assert.deepEqual(guard.admit('10.0.0.1', 0), { admit: true });
  assert.deepEqual(guard.admit('10.0.0.1', 0), { admit: false, reason: 'source-cap' });
  assert.deepEqual(guard.admit('10.0.0.2', 0), { admit: true });
  guard.release('10.0.0.1', 0);
  assert.equal(guard.openConnections, 3);
  assert.equal(guard.refused['source-cap'], 1);
});

test('connection guard: suspects together hold at most their share; a strike expires', T, () => {
  const guard = new ConnectionGuard({ total: 8, perSource: 2, suspectShare: 0.5, suspectForMs: 1_000 });
  for (const source of ['a', 'b', 'c']) guard.strike(source, 0);
  const admitted = ['a', 'a', 'b', 'b', 'c', 'c'].map((s) => guard.admit(s, 10).admit);
  assert.deepEqual(admitted, [true, true, true, true, false, false], 'suspects stop at 4 of 8');
  assert.deepEqual(guard.admit('good', 10), { admit: true }, 'a source that behaves still gets in');
  assert.deepEqual(guard.admit('c', 2_000), { admit: true }, 'after suspectForMs c is not suspect any more');
  for (const s of ['a', 'a', 'b', 'b', 'good', 'c']) guard.release(s, 3_000);
  assert.equal(guard.openConnections, 0);
  assert.equal(guard.trackedSources, 0, 'nothing is remembered once closed and forgiven');
});

test('duplicate members: found in any object, decoded names compared, arrays and strings are not names', T, () => {
  assert.equal(firstDuplicateMember('{"a":1,"b":2}'), null);
  assert.equal(firstDuplicateMember('{"a":1,"a":2}'), 'a');
  assert.equal(firstDuplicateMember('{"a":1,"\\u0061":2}'), 'a');
  assert.equal(firstDuplicateMember('{"x":{"k":1},"y":{"k":2}}'), null);
  assert.equal(firstDuplicateMember('{"x":[{"k":1,"k":2}]}'), 'k');
  assert.equal(firstDuplicateMember('{"s":"a\\",\\"s","t":["s","s"]}'), null);
  assert.equal(firstDuplicateMember('[{"a":1},{"a":1}]'), null);
});
