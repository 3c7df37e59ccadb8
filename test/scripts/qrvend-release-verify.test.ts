/**
 * packaging/qrvend-release.sh with the real verifier: the running release's `qrvend update verify`
 * (this checkout's, as root would run it) checks what the agent left before anything is
 * extracted (docs/decisions/remote-updates-rollout.md item 4). A signed release tarball of 0.2.0 activates; a tampered
 * artifact,
 * an unsigned manifest, one signed by a key of another scope, and a downgrade are refused, with
 * nothing changed. The activation's other paths: qrvend-release.test.ts (a stand-in verifier).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, runScript } from './helpers.js';
import { signManifest, machineArch } from '../../src/updates/manifest.js';
import { testKey, writeTrustFile, type TestKey } from '../fleet/support/operator-keys.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const SCRIPT = join(REPO, 'packaging/qrvend-release.sh');
const T = { timeout: TEST_DEADLINE_MS };
const ARCH = machineArch() ?? 'amd64';
const updateKey = testKey('rel-2026', ['update']);
const otherScope = testKey('ops-2026', ['operate']);

interface Offer {
  version?: string;
  key?: TestKey | null;
  tamper?: boolean;
}

async function activate(
  offer: Offer,
): Promise<{ root: string; upd: string; stderr: string; current: string; done: () => void }> {
  const root = mkdtempSync(join(tmpdir(), 'qrvend-release-verify-'));
  const opt = join(root, 'opt/qrvend');
  const upd = join(root, 'var/lib/qrvend/updates');
  // The running release 0.1.0 is this checkout: its `qrvend update verify` is the real one.
  mkdirSync(join(opt, 'releases/0.1.0/bin'), { recursive: true });
  writeFileSync(
    join(opt, 'releases/0.1.0/bin/qrvend'),
    `#!/bin/sh\nexec "${process.execPath}" "${join(REPO, 'dist/src/cli/main.js')}" "$@"\n`,
  );
  chmodSync(join(opt, 'releases/0.1.0/bin/qrvend'), 0o755);
  symlinkSync('releases/0.1.0', join(opt, 'current'));
  mkdirSync(join(root, 'etc/qrvend'), { recursive: true });
  writeTrustFile(join(root, 'etc/qrvend'), [updateKey, otherScope]);

  const version = offer.version ?? '0.2.0';
  const stage = join(root, '.stage');
  mkdirSync(join(stage, 'opt/qrvend/releases', version, 'bin'), { recursive: true });
  writeFileSync(join(stage, 'opt/qrvend/releases', version, 'bin/qrvend'), `#!/bin/sh\necho ${version}\n`);
  chmodSync(join(stage, 'opt/qrvend/releases', version, 'bin/qrvend'), 0o755);
  const artifactName = `qrvend_${version}_${ARCH}.tar.gz`;
  execFileSync('tar', ['-czf', join(root, artifactName), '-C', stage, 'opt']);
  const bytes = readFileSync(join(root, artifactName));
  const body = {
    version,
    arch: ARCH,
    artifact: artifactName,
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    minVersion: '0.0.1',
  };
  const key = offer.key === undefined ? updateKey : offer.key;
  const manifest =
    key === null
      ? body
      : signManifest(body, { keyId: key.keyId, key: key.key, nowMs: Date.now(), lifetimeMs: 86_400_000 });

  const dl = join(upd, 'downloads', version);
  mkdirSync(dl, { recursive: true });
  writeFileSync(join(dl, 'manifest.json'), JSON.stringify(manifest));
  const onDisk = Buffer.from(bytes);
  if (offer.tamper) onDisk.writeUInt8(onDisk.readUInt8(onDisk.length - 10) ^ 0xff, onDisk.length - 10);
  writeFileSync(join(dl, 'artifact.tar.gz'), onDisk);
  writeFileSync(
    join(upd, 'activate.json'),
    JSON.stringify({ version, rolloutId: 'r-7', requestedAt: new Date().toISOString() }),
  );

  const run = await runScript(SCRIPT, ['start', upd, '60'], { env: { DPKG_ROOT: root }, timeoutMs: 50_000 });
  assert.equal(run.code, 0, run.stderr);
  return {
    root,
    upd,
    stderr: run.stderr,
    current: readlinkSync(join(opt, 'current')),
    done: () => rmSync(root, { recursive: true, force: true }),
  };
}

test('a release signed by an update key of the root-owned trust file is activated', T, async () => {
  const a = await activate({});
  try {
    assert.equal(a.current, 'releases/0.2.0', a.stderr);
    assert.equal(existsSync(join(a.root, 'var/lib/qrvend-release/trial.json')), true);
    assert.equal(existsSync(join(a.upd, 'activation-refused.json')), false);
  } finally {
    a.done();
  }
});

for (const [what, offer, code, says] of [
  [
    'a tampered artifact',
    { tamper: true },
    'UPDATE_ARTIFACT_MISMATCH',
    /the artifact's sha256 is [0-9a-f]{64}, the manifest says/,
  ],
  ['an unsigned manifest', { key: null }, 'UPDATE_SIGNATURE_REFUSED', /the update manifest is unsigned/],
  [
    'a manifest signed by a key of another scope',
    { key: otherScope },
    'UPDATE_SIGNATURE_REFUSED',
    /the key ops-2026 may not sign for the scope update/,
  ],
  ['a downgrade', { version: '0.0.9' }, 'UPDATE_DOWNGRADE', /0\.0\.9 is not newer than the running 0\.1\.0/],
] as const) {
  test(
    `${what} is refused at activation: nothing extracted, nothing switched, the reason left for the agent`,
    T,
    async () => {
      const a = await activate(offer);
      try {
        assert.equal(a.current, 'releases/0.1.0');
        assert.match(a.stderr, new RegExp(`qrvend: ${code}: `), "the journal gets the verifier's own message");
        assert.match(a.stderr, says);
        const refused = JSON.parse(readFileSync(join(a.upd, 'activation-refused.json'), 'utf8')) as {
          version: string;
          reason: string;
        };
        assert.equal(refused.version, offer.version ?? '0.2.0');
        assert.equal(
          refused.reason,
          `qrvend update verify refused the manifest or the artifact (${code}; journalctl -u qrvend says why)`,
        );
        assert.equal(existsSync(join(a.root, 'opt/qrvend/releases', offer.version ?? '0.2.0')), false);
        assert.equal(existsSync(join(a.root, 'var/lib/qrvend-release/trial.json')), false);
      } finally {
        a.done();
      }
    },
  );
}
