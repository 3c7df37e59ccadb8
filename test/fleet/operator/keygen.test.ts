/** `qrvend fleet keygen` and the signing options of `fleet cmd`: what is refused before anything is written or sent. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyringOf } from '../../../src/trust/keys.js';
import { loadMachineKey } from '../../../src/trust/machine-key.js';
import { runCli } from './run-cli.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

test(
  'keygen: a 0600 private key and a trust-file entry a machine ' +
    'accepts; bad id or scope refused (exit 64), nothing written',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-keygen-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const out = join(dir, 'ops.pem');
    const made = await runCli([
      'fleet',
      'keygen',
      '--out',
      out,
      '--id',
      'ops-anna',
      '--scopes',
      'read,operate',
      '--comment',
      'Anna',
    ]);
    assert.equal(made.code, 0, made.stderr);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    assert.match(readFileSync(out, 'utf8'), /^-----BEGIN PRIVATE KEY-----/);
    assert.ok(!made.stdout.includes('PRIVATE'), 'the private key on stdout');
    const entry = JSON.parse(made.stdout);
    assert.deepEqual(Object.keys(entry), ['id', 'publicKey', 'scopes', 'comment']);
    assert.deepEqual([...keyringOf({ keys: [entry] }, null).byId.get('ops-anna')!.scopes], ['read', 'operate']);
    for (const args of [
      ['--id', 'a b'],
      ['--scopes', 'admin'],
      ['--scopes', ''],
    ]) {
      const bad = join(dir, `bad-${args.join('')}.pem`);
      const r = await runCli(['fleet', 'keygen', '--out', bad, ...args]);
      assert.equal(r.code, 64, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(existsSync(bad), false);
    }
    const half = await runCli(['fleet', 'cmd', 'M1', 'ping', '--url', 'mqtt://127.0.0.1:1', '--sign-key', out]);
    assert.equal(half.code, 64);
    assert.match(half.stderr, /--sign-key and --key-id go together/);
    const notKey = await runCli([
      'fleet',
      'cmd',
      'M1',
      'ping',
      '--url',
      'mqtt://127.0.0.1:1',
      '--sign-key',
      join(dir, 'none.pem'),
      '--key-id',
      'x',
    ]);
    assert.equal(notKey.code, 64);
    assert.match(notKey.stderr, /cannot be read \(ENOENT\)/);
  },
);

test(
  'keygen --machine: a 0600 machine key the agent accepts, and the registry entry part naming its key id',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-keygen-machine-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const out = join(dir, 'machine-key.pem');
    const made = await runCli(['fleet', 'keygen', '--machine', 'VM-0042', '--out', out]);
    assert.equal(made.code, 0, made.stderr);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    assert.ok(!made.stdout.includes('PRIVATE'), 'the private key on stdout');
    const entry = JSON.parse(made.stdout) as {
      machineId: string;
      machineKeys: Array<{ id: string; publicKey: string }>;
    };
    assert.equal(entry.machineId, 'VM-0042');
    const loaded = loadMachineKey(out);
    assert.deepEqual(entry.machineKeys, [{ id: loaded.keyId, publicKey: loaded.publicKey }]);
    assert.match(made.stderr, /fleet\.machineKeyFile/);
    const again = await runCli(['fleet', 'keygen', '--machine', 'VM-0042', '--out', out]);
    assert.equal(again.code, 64, 'an existing key is never overwritten');
    const bad = await runCli(['fleet', 'keygen', '--machine', 'VM 42', '--out', join(dir, 'bad.pem')]);
    assert.equal(bad.code, 64);
    assert.equal(existsSync(join(dir, 'bad.pem')), false);
  },
);
