import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NonceBook } from '../../src/trust/nonce-book.js';
import { CLOCK_SKEW_MS } from '../../src/trust/signed.js';
import { generateSigningKey, loadKeyring, loadPrivateKey } from '../../src/trust/keys.js';

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);

function dir(t: { after: (fn: () => void) => void }) {
  const d = mkdtempSync(join(tmpdir(), 'qrvend-trust-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

test('a nonce is refused the second time, also after a restart (it is on disk before the command acts)', (t) => {
  const file = join(dir(t), 'nonces.json');
  const book = new NonceBook(file, NOW);
  assert.deepEqual(book.admit('ops', 'n1', NOW, NOW + 60_000, NOW), { ok: true });
  assert.equal(book.admit('ops', 'n1', NOW, NOW + 60_000, NOW + 1).ok, false);
  const again = new NonceBook(file, NOW + 2);
  const r = again.admit('ops', 'n1', NOW, NOW + 60_000, NOW + 2);
  assert.equal(r.ok ? 'ok' : r.reason, 'replayed');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  // the same nonce under another key is another statement
  assert.equal(again.admit('cfg', 'n1', NOW, NOW + 60_000, NOW + 2).ok, true);
});

test('nonces are forgotten only after their window and the skew have passed', (t) => {
  const file = join(dir(t), 'nonces.json');
  const book = new NonceBook(file, NOW);
  book.admit('ops', 'old', NOW, NOW + 1000, NOW);
  book.admit('ops', 'x', NOW, NOW + 1000, NOW + 1000 + CLOCK_SKEW_MS);
  assert.equal(book.size, 2);
  book.admit('ops', 'y', NOW, NOW + 1000, NOW + 1001 + CLOCK_SKEW_MS);
  assert.equal(book.size, 1);
  assert.deepEqual(Object.keys(JSON.parse(readFileSync(file, 'utf8')).seen), ['ops y']);
});

test('a damaged book refuses what was issued before the loss and takes what is signed afresh', (t) => {
  const file = join(dir(t), 'nonces.json');
  writeFileSync(file, '{"v":1,"floor":0,"se');
  const book = new NonceBook(file, NOW);
  assert.match(book.lostBecause ?? '', /damaged/);
  const r = book.admit('ops', 'n', NOW - 1, NOW + 60_000, NOW);
  assert.equal(r.ok ? 'ok' : r.reason, 'before-loss');
  assert.equal(book.admit('ops', 'n2', NOW, NOW + 60_000, NOW).ok, true);
  // and the floor itself survives a restart
  const r2 = new NonceBook(file, NOW + 5).admit('ops', 'n3', NOW - 1, NOW + 60_000, NOW + 5);
  assert.equal(r2.ok ? 'ok' : r2.reason, 'before-loss');
});

test('loadKeyring refuses a trust file anyone may write, and loadPrivateKey never quotes the file', (t) => {
  const d = dir(t);
  const key = generateSigningKey();
  const trust = join(d, 'trust.json');
  writeFileSync(trust, JSON.stringify({ keys: [{ id: 'ops', publicKey: key.publicKey, scopes: ['read'] }] }));
  chmodSync(trust, 0o644);
  assert.equal(loadKeyring(trust).byId.get('ops')?.scopes.has('read'), true);
  chmodSync(trust, 0o666);
  assert.throws(() => loadKeyring(trust), /writable by group or others/);
  const priv = join(d, 'ops.pem');
  writeFileSync(priv, key.privatePem.replace('PRIVATE KEY-----\n', 'PRIVATE KEY-----\nZZ'));
  assert.throws(
    () => loadPrivateKey(priv),
    (err: Error) => /not a PEM private key/.test(err.message) && !err.message.includes(key.privatePem.split('\n')[1]!),
  );
  writeFileSync(priv, key.privatePem);
  assert.equal(loadPrivateKey(priv).asymmetricKeyType, 'ed25519');
});
