/** Which share a command message spends, read from its raw bytes (src/fleet/machine-link/intake.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { namedTrustedKey } from '../../../src/fleet/machine-link/intake.js';
import { keyringOf, rawPublicKey } from '../../../src/trust/keys.js';
import { signCommand, testKey } from '../support/operator-keys.js';

const T = { timeout: 5_000 };
const ops = testKey('ops.2026', ['operate']);
const relay = testKey('relay-1', ['start']);
const keyring = keyringOf(
  { keys: [ops, relay].map((k) => ({ id: k.keyId, publicKey: rawPublicKey(k.publicKey), scopes: k.scopes })) },
  null,
);
const named = (value: unknown) => namedTrustedKey(Buffer.from(JSON.stringify(value)), keyring);

test('a signature or voucher naming a key of the trust file is that key’s; anything else is nobody’s', T, () => {
  assert.equal(named({ args: {}, signature: signCommand(ops, 'M1', 'reader.disable', {}) }), 'ops.2026');
  assert.equal(named({ args: { txId: 't', startNonce: 'n', voucher: { keyId: 'relay-1', sig: 'x' } } }), 'relay-1');
  assert.equal(named({ args: {}, signature: { keyId: 'stranger' } }), null);
  assert.equal(named({ args: {} }), null);
  assert.equal(namedTrustedKey(Buffer.from('{"signature":{"keyId" : "ops.2026"}}'), keyring), 'ops.2026');
  assert.equal(namedTrustedKey(Buffer.from('not json "keyId":"relay-1"'), keyring), 'relay-1');
  assert.equal(namedTrustedKey(Buffer.from('{"keyId":"ops.2026'), keyring), null);
  assert.equal(namedTrustedKey(Buffer.from('{"keyId":"ops.2026"}'), null), null);
});

test('an id inside an escaped string (a Start body) or spelled with escapes is nobody’s', T, () => {
  assert.equal(named({ args: { body: JSON.stringify({ keyId: 'relay-1' }) } }), null);
  assert.equal(namedTrustedKey(Buffer.from('{"signature":{"key\\u0049d":"ops.2026"}}'), keyring), null);
});

test('only the first mentions are looked at: a message cannot make the scan long', T, () => {
  const mentions = Array.from({ length: 4 }, (_, i) => `"keyId":"nobody-${i}"`).join(',');
  assert.equal(namedTrustedKey(Buffer.from(`{${mentions},"keyId":"ops.2026"}`), keyring), null);
  const three = Array.from({ length: 3 }, (_, i) => `"keyId":"nobody-${i}"`).join(',');
  assert.equal(namedTrustedKey(Buffer.from(`{${three},"keyId":"ops.2026"}`), keyring), 'ops.2026');
});
