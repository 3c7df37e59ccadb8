import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { keyringOf, rawPublicKey, type Scope } from '../../src/trust/keys.js';
import {
  CLOCK_SKEW_MS,
  MAX_DOCUMENT_LIFETIME_MS,
  MAX_LIFETIME_MS,
  precheckStatement,
  signStatement,
  verifyPrechecked,
  verifyStatement,
} from '../../src/trust/signed.js';

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);

function pair() {
  return generateKeyPairSync('ed25519');
}

function ring(entries: Array<{ id: string; key: ReturnType<typeof pair>; scopes: Scope[] }>) {
  return keyringOf(
    { keys: entries.map((e) => ({ id: e.id, publicKey: rawPublicKey(e.key.publicKey), scopes: e.scopes })) },
    null,
  );
}

const ops = pair();
const other = pair();
const keyring = ring([
  { id: 'ops', key: ops, scopes: ['read', 'operate'] },
  { id: 'cfg', key: other, scopes: ['configure'] },
]);
const body = { machineId: 'VM-1', command: 'reader.disable', args: {} };

test('a statement signed by a trusted key with the scope passes', () => {
  const signature = signStatement('command', body, { keyId: 'ops', key: ops.privateKey, nowMs: NOW });
  const r = verifyStatement({ kind: 'command', body, signature, scope: 'operate', keyring, nowMs: NOW + 1000 });
  assert.equal(r.ok, true);
});

test('each refusal names its reason', () => {
  const signature = signStatement('command', body, { keyId: 'ops', key: ops.privateKey, nowMs: NOW });
  const check = (over: Partial<Parameters<typeof verifyStatement>[0]>) => {
    const r = verifyStatement({ kind: 'command', body, signature, scope: 'operate', keyring, nowMs: NOW, ...over });
    return r.ok ? 'ok' : r.reason;
  };
  assert.equal(check({ keyring: null }), 'no-keys');
  assert.equal(check({ keyring: keyringOf({ keys: [] }, null) }), 'no-keys');
  assert.equal(check({ signature: undefined }), 'unsigned');
  assert.equal(check({ signature: { ...signature, sig: 'x' } }), 'malformed');
  assert.equal(check({ signature: { ...signature, extra: 1 } }), 'malformed');
  assert.equal(check({ signature: { ...signature, keyId: 'nobody' } }), 'unknown-key');
  assert.equal(check({ scope: 'configure' }), 'scope');
  assert.equal(check({ body: { ...body, machineId: 'VM-2' } }), 'bad-signature');
  assert.equal(check({ body: { ...body, command: 'reader.enable' } }), 'bad-signature');
  assert.equal(check({ body: { ...body, args: { id: 1 } } }), 'bad-signature');
  assert.equal(check({ kind: 'start-voucher' }), 'bad-signature');
  assert.equal(check({ signature: { ...signature, nonce: 'AAAAAAAAAAAAAAAAAAAAAAAA' } }), 'bad-signature');
  // the same bytes signed by another key, presented under ops' id
  const forged = signStatement('command', body, { keyId: 'ops', key: other.privateKey, nowMs: NOW });
  assert.equal(check({ signature: forged }), 'bad-signature');
});

test('the window: about 30 s of skew either way, and a bounded lifetime', () => {
  const signature = signStatement('command', body, {
    keyId: 'ops',
    key: ops.privateKey,
    nowMs: NOW,
    lifetimeMs: 60_000,
  });
  const at = (nowMs: number) => {
    const r = verifyStatement({ kind: 'command', body, signature, scope: 'operate', keyring, nowMs });
    return r.ok ? 'ok' : r.reason;
  };
  assert.equal(at(NOW - CLOCK_SKEW_MS), 'ok');
  assert.equal(at(NOW - CLOCK_SKEW_MS - 1), 'not-yet-valid');
  assert.equal(at(NOW + 60_000 + CLOCK_SKEW_MS), 'ok');
  assert.equal(at(NOW + 60_000 + CLOCK_SKEW_MS + 1), 'expired');
  assert.throws(
    () =>
      signStatement('command', body, {
        keyId: 'ops',
        key: ops.privateKey,
        nowMs: NOW,
        lifetimeMs: MAX_LIFETIME_MS + 1,
      }),
    RangeError,
  );
  // a window stretched by hand past the bound is refused before the signature is even checked
  const long = { ...signature, expiresAt: signature.issuedAt + MAX_LIFETIME_MS + 1 };
  const r = verifyStatement({ kind: 'command', body, signature: long, scope: 'operate', keyring, nowMs: NOW });
  assert.equal(r.ok ? 'ok' : r.reason, 'too-long');
});

test('keyringOf refuses a duplicate id, a bad key and an unknown scope, naming the member', () => {
  const pk = rawPublicKey(ops.publicKey);
  assert.throws(
    () =>
      keyringOf(
        {
          keys: [
            { id: 'a', publicKey: pk, scopes: ['read'] },
            { id: 'a', publicKey: pk, scopes: ['read'] },
          ],
        },
        null,
      ),
    /given twice/,
  );
  assert.throws(
    () => keyringOf({ keys: [{ id: 'a', publicKey: 'short', scopes: ['read'] }] }, null),
    /keys\.0\.publicKey/,
  );
  assert.throws(() => keyringOf({ keys: [{ id: 'a', publicKey: pk, scopes: ['admin'] }] }, null), /keys\.0\.scopes\.0/);
  assert.throws(() => keyringOf({ keys: [{ id: 'a b', publicKey: pk, scopes: ['read'] }] }, null), /keys\.0\.id/);
});

test('precheckStatement refuses what costs no signature arithmetic; verifyPrechecked does the rest', () => {
  const signature = signStatement('command', body, { keyId: 'ops', key: ops.privateKey, nowMs: NOW });
  assert.equal(
    precheckStatement({ signature: { ...signature, keyId: 'nobody' }, scope: 'operate', keyring, nowMs: NOW }).ok,
    false,
  );
  const pre = precheckStatement({ signature, scope: 'operate', keyring, nowMs: NOW });
  assert.equal(pre.ok, true);
  if (!pre.ok) return;
  assert.equal(verifyPrechecked({ kind: 'command', body }, pre).ok, true);
  const other = verifyPrechecked({ kind: 'command', body: { ...body, machineId: 'VM-2' } }, pre);
  assert.equal(other.ok ? 'ok' : other.reason, 'bad-signature');
});

test('a document may be signed for longer when signer and verifier both allow it; a command may not', () => {
  const year = 365 * 24 * 3600_000;
  const doc = { machines: [] };
  const signature = signStatement('registry', doc, {
    keyId: 'ops',
    key: ops.privateKey,
    nowMs: NOW,
    lifetimeMs: year,
    maxLifetimeMs: MAX_DOCUMENT_LIFETIME_MS,
  });
  const asDocument = verifyStatement({
    kind: 'registry',
    body: doc,
    signature,
    scope: 'read',
    keyring,
    nowMs: NOW + 1000,
    maxLifetimeMs: MAX_DOCUMENT_LIFETIME_MS,
  });
  assert.equal(asDocument.ok, true);
  const asCommand = verifyStatement({
    kind: 'registry',
    body: doc,
    signature,
    scope: 'read',
    keyring,
    nowMs: NOW + 1000,
  });
  assert.equal(asCommand.ok ? 'ok' : asCommand.reason, 'too-long');
  assert.throws(
    () => signStatement('command', body, { keyId: 'ops', key: ops.privateKey, nowMs: NOW, lifetimeMs: year }),
    RangeError,
  );
});

test(
  'commands are signed in format 2 (the key id signed) and ' +
    'refused in format 1; other kinds stay in format 1 and take 2',
  () => {
    const command = signStatement('command', body, { keyId: 'ops', key: ops.privateKey, nowMs: NOW });
    assert.equal(command.format, 2);
    assert.equal(
      verifyStatement({ kind: 'command', body, signature: command, scope: 'operate', keyring, nowMs: NOW }).ok,
      true,
    );
    const old = signStatement('command', body, { keyId: 'ops', key: ops.privateKey, nowMs: NOW, format: 1 });
    assert.equal(old.format, undefined);
    const refused = verifyStatement({ kind: 'command', body, signature: old, scope: 'operate', keyring, nowMs: NOW });
    assert.equal(refused.ok ? 'ok' : refused.reason, 'old-format');
    // A format-1 signature dressed as format 2 does not verify: the format is in the bytes (the domain and key id).
    const dressed = verifyStatement({
      kind: 'command',
      body,
      signature: { ...old, format: 2 },
      scope: 'operate',
      keyring,
      nowMs: NOW,
    });
    assert.equal(dressed.ok ? 'ok' : dressed.reason, 'bad-signature');
    const registry = signStatement('registry', body, { keyId: 'ops', key: ops.privateKey, nowMs: NOW });
    assert.equal(registry.format, undefined, 'older receivers verify it');
    assert.equal(
      verifyStatement({ kind: 'registry', body, signature: registry, scope: 'read', keyring, nowMs: NOW }).ok,
      true,
    );
    const registry2 = signStatement('registry', body, { keyId: 'ops', key: ops.privateKey, nowMs: NOW, format: 2 });
    assert.equal(
      verifyStatement({ kind: 'registry', body, signature: registry2, scope: 'read', keyring, nowMs: NOW }).ok,
      true,
    );
  },
);
