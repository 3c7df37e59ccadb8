/** `qrvend update verify` as a technician (and the root-side activator) runs it: the real CLI in a child process. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeRelease } from './support/release-fixture.js';
import { signReleaseTarball } from '../../release/sign.js';
import { testKey } from '../fleet/support/operator-keys.js';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../support/deadlines.js';

const MAIN_JS = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const T = { timeout: TEST_DEADLINE_MS };

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN_JS, 'update', 'verify', ...args],
      { timeout: CHILD_DEADLINE_MS, env: { ...process.env, QRVEND_CONFIG: '' } },
      (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
      },
    );
  });
}

test('update verify: exit 0 for a good release, non-zero with the reason otherwise', T, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-verify-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = makeRelease(dir, { version: '9.1.0', arch: 'armhf' });
  const args = [
    '--manifest',
    r.manifestFile,
    '--artifact',
    r.artifactFile,
    '--trust',
    r.trustFile,
    '--installed',
    '9.0.0',
    '--arch',
    'armhf',
  ];
  const good = await cli([...args, '--json']);
  assert.equal(good.code, 0, good.stderr);
  assert.equal(JSON.parse(good.stdout).version, '9.1.0');

  const down = await cli([...args.slice(0, 7), '9.1.0', '--arch', 'armhf']);
  assert.equal(down.code, 1);
  assert.match(down.stderr, /UPDATE_DOWNGRADE/);

  const arch = await cli([...args.slice(0, 9), 'arm64']);
  assert.equal(arch.code, 1);
  assert.match(arch.stderr, /UPDATE_WRONG_ARCH/);

  const tampered = Buffer.from(r.artifactBytes);
  tampered[0] = tampered[0]! ^ 0xff;
  writeFileSync(r.artifactFile, tampered);
  const bad = await cli(args);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /UPDATE_ARTIFACT_MISMATCH/);

  writeFileSync(r.manifestFile, 'x'.repeat(9000));
  const big = await cli(args);
  assert.equal(big.code, 1);
  assert.match(big.stderr, /UPDATE_MANIFEST_INVALID.*more than/);
});

test('release --sign: the manifest written beside a tarball verifies with the CLI', T, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-sign-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const key = testKey('rel-2026', ['update']);
  const r = makeRelease(dir, { key }); // for its trust file
  const keyFile = join(dir, 'update.pem');
  writeFileSync(keyFile, key.privatePem, { mode: 0o600 });
  const tarball = join(dir, 'qrvend-9.2.0-linux-arm64.tar.gz');
  writeFileSync(tarball, Buffer.alloc(4096, 7));
  const out = signReleaseTarball(tarball, '9.2.0', 'arm64', {
    keyFile,
    keyId: 'rel-2026',
    expiresDays: 30,
    minVersion: null,
    nowMs: Date.now(),
  });
  assert.equal(out.manifest, join(dir, 'qrvend_9.2.0_arm64.manifest.json'));
  assert.equal(JSON.parse(readFileSync(out.manifest, 'utf8')).minVersion, '9.0.0');
  const ok = await cli([
    '--manifest',
    out.manifest,
    '--artifact',
    out.artifact,
    '--trust',
    r.trustFile,
    '--installed',
    '9.1.0',
    '--arch',
    'arm64',
  ]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /good: qrvend 9\.2\.0 for arm64, signed by rel-2026/);
});
