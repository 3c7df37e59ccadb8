/** Member names read from JSON text before anything is built from it (src/core/json-member-names.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstMemberNamed, PROTOTYPE_MEMBER } from '../../src/core/json-member-names.js';

const T = { timeout: 5_000 };
const find = (text: string) => firstMemberNamed(text, PROTOTYPE_MEMBER);

test('the path of the first member so named, names decoded, values and strings ignored', T, () => {
  assert.deepEqual(find('{"a":{"b":[1,{"c":2},{"__proto__":3}]}}'), ['a', 'b', '2', '__proto__']);
  assert.deepEqual(find('{"x":"__proto__","y":{"__pro\\u0074o__":{}}}'), ['y', '__proto__']);
  assert.deepEqual(find('{"s":"{\\"__proto__\\":1}","__proto__":0}'), ['__proto__']);
  assert.equal(find('{"a":["__proto__",{"b":"__proto__"}]}'), null);
  assert.equal(find('{"constructor":1,"prototype":2}'), null);
});

test('text that is not JSON ends the scan without a throw or a hang', T, () => {
  for (const text of ['{"__proto', '{"a":"\\', '[[[[', '}}}]]]', '"', '{"a":1,,"__proto__"', ''])
    assert.doesNotThrow(() => find(text), text);
  assert.deepEqual(find('{"a":1,,"__proto__":1'), ['__proto__']);
});
