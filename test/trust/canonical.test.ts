import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CanonicalError, canonicalJson, signedBytes } from '../../src/trust/canonical.js';

test('canonicalJson: one spelling whatever the key order or spacing', () => {
  const a = JSON.parse('{ "b": 1, "a": { "y": [1, 2, {"q": null, "p": true}], "x": "é" } }');
  const b = JSON.parse('{"a":{"x":"é","y":[1,2,{"p":true,"q":null}]},"b":1.0}');
  assert.equal(canonicalJson(a), '{"a":{"x":"é","y":[1,2,{"p":true,"q":null}]},"b":1}');
  assert.equal(canonicalJson(a), canonicalJson(b));
});

test('canonicalJson: refuses what JSON cannot carry, and nesting past the bound', () => {
  assert.throws(() => canonicalJson({ a: Number.NaN }), CanonicalError);
  assert.throws(() => canonicalJson({ a: undefined }), CanonicalError);
  assert.throws(() => canonicalJson({ a: () => 1 }), CanonicalError);
  let deep: unknown = 1;
  for (let i = 0; i < 40; i += 1) deep = [deep];
  assert.throws(() => canonicalJson(deep), /nested deeper/);
});

test('signedBytes: the kind is part of the bytes, so one kind cannot stand for another', () => {
  assert.notDeepEqual(signedBytes('command', { a: 1 }), signedBytes('start-voucher', { a: 1 }));
  assert.match(signedBytes('command', { a: 1 }).toString(), /^qrvend-signed-v1\ncommand\n\{"a":1\}$/);
});

test('signedBytes with a key id: format 2, whose bytes name the key', () => {
  assert.match(signedBytes('command', { a: 1 }, 'ops').toString(), /^qrvend-signed-v2\ncommand\nops\n\{"a":1\}$/);
  assert.notDeepEqual(signedBytes('command', { a: 1 }, 'ops'), signedBytes('command', { a: 1 }, 'ops-b'));
});
