/**
 * `npm run release -- --sign KEY --key-id ID`: a signed update manifest beside each release
 * tarball (docs/decisions/remote-updates.md). The manifest names the artifact `qrvend_<version>_<arch>.tar.gz`
 * (the name machines fetch, manifest-schema.ts ARTIFACT_NAME); when the tarball was packed under
 * another name, a hard link of that name is made beside it, so both names hold the same bytes.
 */
import { existsSync, linkSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { loadPrivateKey } from '../src/trust/keys.js';
import { hashFile, signManifest } from '../src/updates/manifest.js';
import type { UpdateArch } from '../src/fleet/contract/manifest-schema.js';

export interface SignReleaseOptions {
  keyFile: string;
  keyId: string;
  expiresDays: number;
  /** The oldest version the update applies to; default: the release's own major.0.0. */
  minVersion: string | null;
  nowMs: number;
}

export function defaultMinVersion(version: string): string {
  return `${version.split('.')[0]}.0.0`;
}

/** Writes `<dir>/qrvend_<version>_<arch>.manifest.json` for the tarball; returns its path and the artifact's. */
export function signReleaseTarball(
  tarball: string,
  version: string,
  arch: UpdateArch,
  o: SignReleaseOptions,
): { manifest: string; artifact: string } {
  const name = `qrvend_${version}_${arch}.tar.gz`;
  const artifact = join(dirname(tarball), name);
  if (basename(tarball) !== name) {
    rmSync(artifact, { force: true });
    linkSync(tarball, artifact);
  }
  const { size, sha256 } = hashFile(artifact);
  const key = loadPrivateKey(o.keyFile);
  const signed = signManifest(
    { version, arch, artifact: name, size, sha256, minVersion: o.minVersion ?? defaultMinVersion(version) },
    { keyId: o.keyId, key, nowMs: o.nowMs, lifetimeMs: o.expiresDays * 86_400_000 },
  );
  const manifest = join(dirname(tarball), `qrvend_${version}_${arch}.manifest.json`);
  if (existsSync(manifest)) rmSync(manifest);
  writeFileSync(manifest, `${JSON.stringify(signed, null, 2)}\n`, { mode: 0o644 });
  return { manifest, artifact };
}
