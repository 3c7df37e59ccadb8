/**
 * The daemon's start checks (src/doctor/start-checks.ts): what `qrvend run` refuses to start on,
 * and what config.set refuses to accept (docs/decisions/fleet-trust.md item 4). Each problem names the key and why,
 * never a secret's content; the daemon raises the reader's own error (its code gives exit 78).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { ConfigSchema, type QrvendConfig } from '../../src/config/schema.js';
import { loadConfig } from '../../src/config/load.js';
import { assertStartable, changeProblems, startProblems } from '../../src/doctor/start-checks.js';
import { isQrvendError } from '../../src/core/errors.js';
import { generateMachineKey } from '../../src/trust/machine-key.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

function fixture(): { dir: string; config: (over?: Record<string, unknown>) => QrvendConfig; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-start-checks-'));
  const token = join(dir, 'secret-token');
  writeFileSync(token, `${'k'.repeat(64)}\n`, { mode: 0o600 });
  const config = (over: Record<string, unknown> = {}) => {
    const site = join(dir, `site-${Math.random().toString(16).slice(2)}.json`);
    writeFileSync(
      site,
      JSON.stringify({
        mdb: { port: 'sim' },
        fleet: { configOverlay: join(dir, 'overlay.json') },
        start: { secretTokenFile: token },
        ...over,
      }),
    );
    return loadConfig({ file: site, env: {} }).config;
  };
  return { dir, config, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test('a configuration whose files are in order passes both lists', T, () => {
  const f = fixture();
  try {
    const config = f.config();
    assert.deepEqual(startProblems(config), []);
    assert.deepEqual(changeProblems(config), []);
    assertStartable(config);
  } finally {
    f.done();
  }
});

test('each file the start needs is named by its key, with why, never with its content', T, () => {
  const f = fixture();
  try {
    const short = join(f.dir, 'short-token');
    writeFileSync(short, 'S3CR3T-SHORT\n', { mode: 0o600 });
    const exposedKey = join(f.dir, 'tls.key');
    writeFileSync(exposedKey, 'PRIVATE-KEY-BYTES', { mode: 0o644 });
    const cert = join(f.dir, 'tls.crt');
    writeFileSync(cert, 'CERT', { mode: 0o644 });
    const key = join(f.dir, 'ok.key');
    writeFileSync(key, 'PRIVATE-KEY-BYTES', { mode: 0o600 });
    const cases: Array<{ over: Record<string, unknown>; path: string; why: RegExp }> = [
      { over: { start: { secretTokenFile: '/nonexistent' } }, path: 'start.secretTokenFile', why: /file not found/ },
      {
        over: { start: { secretTokenFile: short } },
        path: 'start.secretTokenFile',
        why: /holds 12 characters after trimming/,
      },
      {
        over: { start: { secretTokenFile: join(f.dir, 'secret-token'), certFile: cert, keyFile: exposedKey } },
        path: 'start.keyFile',
        why: /mode 0644: readable by every local user/,
      },
      {
        over: {
          start: { secretTokenFile: join(f.dir, 'secret-token'), certFile: join(f.dir, 'missing.crt'), keyFile: key },
        },
        path: 'start.certFile',
        why: /cannot be read \(ENOENT\)/,
      },
      {
        over: { gateway: { baseUrl: 'https://gateway.example', caFile: join(f.dir, 'missing-ca.pem') } },
        path: 'gateway.caFile',
        why: /cannot be read/,
      },
    ];
    for (const c of cases) {
      const problems = startProblems(f.config(c.over));
      assert.equal(problems.length, 1, JSON.stringify(problems));
      assert.equal(problems[0]!.path, c.path);
      assert.match(problems[0]!.reason, c.why);
      assert.equal(/S3CR3T|PRIVATE-KEY/.test(problems[0]!.reason), false, 'a secret in the reason');
    }
  } finally {
    f.done();
  }
});

test("the daemon raises the reader's own error (SECRET_UNREADABLE, CONFIG_UNREADABLE: exit 78)", T, () => {
  const f = fixture();
  try {
    assert.throws(
      () => assertStartable(f.config({ start: { secretTokenFile: '/nonexistent' } })),
      (err) => isQrvendError(err, 'SECRET_UNREADABLE') && /\/nonexistent: file not found/.test(err.message),
    );
    assert.throws(
      () =>
        assertStartable(f.config({ gateway: { baseUrl: 'https://gateway.example', caFile: '/nonexistent/ca.pem' } })),
      (err) => isQrvendError(err, 'CONFIG_UNREADABLE'),
    );
  } finally {
    f.done();
  }
});

test('fleet credentials the link cannot read stop a change, not a start (payments go on without the link)', T, () => {
  const f = fixture();
  try {
    const config = f.config({
      fleet: {
        configOverlay: join(f.dir, 'overlay.json'),
        url: 'mqtt://127.0.0.1:1883',
        username: 'vm-1',
        passwordFile: join(f.dir, 'missing-password'),
      },
    });
    assert.deepEqual(startProblems(config), []);
    const problems = changeProblems(config);
    assert.deepEqual(
      problems.map((p) => p.path),
      ['fleet.passwordFile'],
    );
    assert.match(problems[0]!.reason, /fleet\.passwordFile .*missing-password cannot be read \(ENOENT\)/);
    // Without a fleet link, its files are nobody's concern.
    assert.deepEqual(
      changeProblems(
        ConfigSchema.parse({ ...config, fleet: { ...config.fleet, url: null, acceptRelayedStart: false } }),
      ),
      [],
    );
  } finally {
    f.done();
  }
});

test(
  'a machine key others may read, or owned by another user, stops the start (fleet.machineKeyFile, exit 78)',
  T,
  () => {
    const f = fixture();
    try {
      const key = join(f.dir, 'machine-key.pem');
      writeFileSync(key, generateMachineKey().privatePem, { mode: 0o640 });
      const fleet = { configOverlay: join(f.dir, 'overlay.json'), url: 'mqtt://127.0.0.1:1883', machineKeyFile: key };
      const problems = startProblems(f.config({ fleet }));
      assert.deepEqual(
        problems.map((p) => p.path),
        ['fleet.machineKeyFile'],
      );
      assert.match(problems[0]!.reason, /mode 0640: group or others may use it; chmod 0600/);
      assert.equal(/PRIVATE/.test(problems[0]!.reason), false, 'a secret in the reason');
      assert.throws(
        () => assertStartable(f.config({ fleet })),
        (err) => isQrvendError(err, 'CONFIG_UNREADABLE'),
      );
      chmodSync(key, 0o600);
      assert.deepEqual(startProblems(f.config({ fleet })), []);
      assert.deepEqual(
        startProblems(f.config({ fleet: { ...fleet, machineKeyFile: join(f.dir, 'none.pem') } })).map((p) => p.path),
        ['fleet.machineKeyFile'],
      );
    } finally {
      f.done();
    }
  },
);
