import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isQrvendError } from '../../src/core/errors.js';
import { loadKeyring } from '../../src/trust/keys.js';
import { machineArch, verifyArtifactFile, verifyManifest, type ManifestCheck } from '../../src/updates/manifest.js';
import { testKey } from '../fleet/support/operator-keys.js';
import { makeRelease } from './support/release-fixture.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

function withDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-manifest-'));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function refusedWith(check: ManifestCheck, code: string, words: RegExp): void {
  assert.throws(
    () => verifyManifest(check),
    (err: unknown) => isQrvendError(err) && err.code === code && words.test(err.message),
    `${code} ${words}`,
  );
}

test('a manifest signed by an update key, for this architecture and a newer version, is taken', T, () => {
  withDir((dir) => {
    const r = makeRelease(dir, { version: '9.1.0', arch: 'amd64' });
    const m = verifyManifest({
      manifest: r.manifest,
      keyring: loadKeyring(r.trustFile),
      nowMs: Date.now(),
      running: '9.0.3',
      arch: 'amd64',
    });
    assert.equal(m.version, '9.1.0');
    verifyArtifactFile(r.artifactFile, m);
  });
});

test('each refusal has its own code and names what was wrong', T, () => {
  withDir((dir) => {
    const operator = testKey('ops', ['read', 'operate', 'configure']);
    const r = makeRelease(dir, { version: '9.1.0', arch: 'amd64', minVersion: '9.0.0', alsoTrust: [operator] });
    const keyring = loadKeyring(r.trustFile);
    const base: ManifestCheck = { manifest: r.manifest, keyring, nowMs: Date.now(), running: '9.0.3', arch: 'amd64' };
    const { signature, ...unsigned } = r.manifest;
    refusedWith({ ...base, manifest: unsigned }, 'UPDATE_SIGNATURE_REFUSED', /unsigned/);
    refusedWith(
      { ...base, manifest: { ...r.manifest, size: r.manifest.size + 1 } },
      'UPDATE_SIGNATURE_REFUSED',
      /bad-signature/,
    );
    refusedWith({ ...base, manifest: { ...r.manifest, extra: 1 } }, 'UPDATE_MANIFEST_INVALID', /malformed/);
    refusedWith(
      { ...base, manifest: { ...r.manifest, artifact: '../etc/passwd' } },
      'UPDATE_MANIFEST_INVALID',
      /artifact/,
    );
    refusedWith({ ...base, keyring: null }, 'UPDATE_SIGNATURE_REFUSED', /no-keys/);
    refusedWith({ ...base, nowMs: signature.expiresAt + 3_600_000 }, 'UPDATE_SIGNATURE_REFUSED', /expired/);
    refusedWith({ ...base, arch: 'arm64' }, 'UPDATE_WRONG_ARCH', /built for amd64, this machine is arm64/);
    refusedWith({ ...base, arch: null }, 'UPDATE_WRONG_ARCH', /no release is built/);
    refusedWith({ ...base, running: '9.1.0' }, 'UPDATE_DOWNGRADE', /not newer than the running 9\.1\.0/);
    refusedWith({ ...base, running: '10.0.0' }, 'UPDATE_DOWNGRADE', /not newer/);
    refusedWith({ ...base, running: '8.9.9' }, 'UPDATE_TOO_OLD', /applies from 9\.0\.0 on; this machine runs 8\.9\.9/);
    refusedWith({ ...base, running: 'dev' }, 'UPDATE_MANIFEST_INVALID', /not a release version/);
  });
});

test('a pre-release of the offered version is older: the update to the release is taken', T, () => {
  withDir((dir) => {
    const r = makeRelease(dir, { version: '9.1.0' });
    assert.equal(
      verifyManifest({
        manifest: r.manifest,
        keyring: loadKeyring(r.trustFile),
        nowMs: Date.now(),
        running: '9.1.0-rc.3',
        arch: 'amd64',
      }).version,
      '9.1.0',
    );
  });
});

test('a manifest signed by a key without the update scope is refused', T, () => {
  withDir((dir) => {
    const r = makeRelease(dir, { key: testKey('ops', ['read', 'operate', 'configure']) });
    refusedWith(
      { manifest: r.manifest, keyring: loadKeyring(r.trustFile), nowMs: Date.now(), running: '1.0.0', arch: 'amd64' },
      'UPDATE_SIGNATURE_REFUSED',
      /scope update/,
    );
  });
});

test('an artifact of another size or another content is refused', T, () => {
  withDir((dir) => {
    const r = makeRelease(dir);
    const flipped = Buffer.from(r.artifactBytes);
    flipped[1000] = flipped[1000]! ^ 1;
    writeFileSync(r.artifactFile, flipped);
    assert.throws(
      () => verifyArtifactFile(r.artifactFile, r.manifest),
      (err: unknown) => isQrvendError(err, 'UPDATE_ARTIFACT_MISMATCH') && /sha256/.test(err.message),
    );
    writeFileSync(r.artifactFile, r.artifactBytes.subarray(1));
    assert.throws(
      () => verifyArtifactFile(r.artifactFile, r.manifest),
      (err: unknown) => isQrvendError(err, 'UPDATE_ARTIFACT_MISMATCH') && /bytes, the manifest says/.test(err.message),
    );
  });
});

test('node architectures map to the Debian names releases are built for', T, () => {
  assert.equal(machineArch('arm64'), 'arm64');
  assert.equal(machineArch('arm'), 'armhf');
  assert.equal(machineArch('x64'), 'amd64');
  assert.equal(machineArch('ia32'), null);
});
