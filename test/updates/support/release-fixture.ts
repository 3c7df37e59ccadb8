/**
 * A signed release for tests: an artifact of random bytes (standing in for the tarball), its
 * manifest signed by an `update` key, and the trust file that lists the key.
 */
import { randomBytes, createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { signManifest } from '../../../src/updates/manifest.js';
import type { UpdateArch, UpdateManifest, UpdateManifestBody } from '../../../src/fleet/contract/manifest-schema.js';
import { testKey, writeTrustFile, type TestKey } from '../../fleet/support/operator-keys.js';

export interface TestRelease {
  key: TestKey;
  trustFile: string;
  artifactBytes: Buffer;
  artifactFile: string;
  manifest: UpdateManifest;
  manifestFile: string;
}

export interface ReleaseOptions {
  version?: string;
  arch?: UpdateArch;
  minVersion?: string;
  size?: number;
  key?: TestKey;
  /** Extra keys the trust file lists beside `key` (e.g. one of another scope). */
  alsoTrust?: TestKey[];
  lifetimeMs?: number;
  nowMs?: number;
}

export function makeRelease(dir: string, o: ReleaseOptions = {}): TestRelease {
  const version = o.version ?? '9.1.0';
  const arch = o.arch ?? 'amd64';
  const key = o.key ?? testKey('rel-2026', ['update']);
  const trustFile = writeTrustFile(dir, [key, ...(o.alsoTrust ?? [])]);
  const artifactBytes = randomBytes(o.size ?? 200_000);
  const artifact = `qrvend_${version}_${arch}.tar.gz`;
  const artifactFile = join(dir, artifact);
  writeFileSync(artifactFile, artifactBytes);
  const body: UpdateManifestBody = {
    version,
    arch,
    artifact,
    size: artifactBytes.length,
    sha256: createHash('sha256').update(artifactBytes).digest('hex'),
    minVersion: o.minVersion ?? '0.0.1',
  };
  const manifest = signManifest(body, {
    keyId: key.keyId,
    key: key.key,
    nowMs: o.nowMs ?? Date.now(),
    lifetimeMs: o.lifetimeMs ?? 30 * 86_400_000,
  });
  const manifestFile = join(dir, `qrvend_${version}_${arch}.manifest.json`);
  writeFileSync(manifestFile, JSON.stringify(manifest));
  return { key, trustFile, artifactBytes, artifactFile, manifest, manifestFile };
}
