/**
 * The releases the field test offers over the fleet (docs/decisions/remote-updates-rollout.md item 6), made on the host
 * from the
 * release under test: its tarball (beside the .deb, as `npm run release` writes it; else the
 * .deb's own tree) repacked as higher versions, the same way the upgrade step repacks the .deb
 * (run.ts bumpVersion): the release tree renamed, package.json's version changed (the agent's
 * version comes from it), `opt/qrvend/current` pointing at it. Each manifest is signed with the
 * harness's release key, whose public half is in the machine's trust file.
 */
import {
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  chmodSync,
  copyFileSync,
  openSync,
  readSync,
  writeSync,
  closeSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { hashFile, signManifest } from '../../src/updates/manifest.js';
import type { UpdateArch, UpdateManifest } from '../../src/fleet/contract/manifest-schema.js';
import type { TestKey } from '../fleet/support/operator-keys.js';
import { run } from './proc.js';

export interface UpdateRelease {
  version: string;
  /** The tarball on the host (served by the artifact server). */
  file: string;
  /** Its file name, the manifest's `artifact`. */
  name: string;
  manifest: UpdateManifest;
}

export interface ReleaseSpec {
  version: string;
  /** The release's entry (bin/qrvend) exits 1 at once: a version that cannot start. */
  exitsAtStart?: boolean;
}

/** The .deb's version and, when `npm run release` wrote it beside the .deb, the tarball. */
export function releaseUnderTest(deb: string): { version: string; tarball: string | null } {
  const m = /qrvend_([^_]+)_[^_]+\.deb$/.exec(deb);
  if (m === null) throw new Error(`cannot read a version from the .deb's name ${deb}`);
  const tarball = deb.replace(/\.deb$/, '.tar.gz');
  return { version: m[1]!, tarball: existsSync(tarball) ? tarball : null };
}

/** Builds and signs one tarball per spec, in order, into `outDir`. */
export async function buildUpdateReleases(
  deb: string,
  arch: UpdateArch,
  specs: readonly ReleaseSpec[],
  key: TestKey,
  outDir: string,
): Promise<UpdateRelease[]> {
  const base = releaseUnderTest(deb);
  const tree = join(outDir, 'update-tree');
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(tree, { recursive: true });
  const releaseDir = (v: string) => join(tree, 'opt/qrvend/releases', v);
  if (base.tarball !== null)
    await run('tar', ['-xzf', base.tarball, '-C', tree, `opt/qrvend/releases/${base.version}`], { timeoutMs: 300_000 });
  else await run('dpkg-deb', ['-x', deb, tree], { timeoutMs: 300_000 });
  if (!existsSync(join(releaseDir(base.version), 'bin/qrvend')))
    throw new Error(`no opt/qrvend/releases/${base.version}/bin/qrvend in ${base.tarball ?? deb}`);
  const out: UpdateRelease[] = [];
  let at = base.version;
  try {
    for (const spec of specs) {
      renameSync(releaseDir(at), releaseDir(spec.version));
      const pkgFile = join(releaseDir(spec.version), 'package.json');
      const pkg = readFileSync(pkgFile, 'utf8');
      writeFileSync(pkgFile, pkg.replace(`"version": "${at}"`, `"version": "${spec.version}"`));
      at = spec.version;
      const entry = join(releaseDir(spec.version), 'bin/qrvend');
      const kept = join(outDir, 'qrvend-entry.kept');
      if (spec.exitsAtStart) {
        renameSync(entry, kept);
        writeFileSync(
          entry,
          '#!/bin/sh\necho "qrvend (field test): this release exits at start on purpose" >&2\nexit 1\n',
        );
        chmodSync(entry, 0o755);
      }
      const current = join(tree, 'opt/qrvend/current');
      rmSync(current, { force: true });
      symlinkSync(`releases/${spec.version}`, current);
      const name = `qrvend_${spec.version}_${arch}.tar.gz`;
      const file = join(outDir, name);
      // gzip -1: the host's CPU is shared with the emulated Pi; the size hardly matters on loopback.
      await run(
        'tar',
        ['--owner=0', '--group=0', '--numeric-owner', '--sort=name', '-I', 'gzip -1', '-cf', file, '-C', tree, 'opt'],
        { timeoutMs: 300_000 },
      );
      if (spec.exitsAtStart) renameSync(kept, entry);
      const { size, sha256 } = hashFile(file);
      const manifest = signManifest(
        { version: spec.version, arch, artifact: name, size, sha256, minVersion: `${base.version.split('.')[0]}.0.0` },
        { keyId: key.keyId, key: key.key, nowMs: Date.now(), lifetimeMs: 86_400_000 },
      );
      writeFileSync(
        join(outDir, `qrvend_${spec.version}_${arch}.manifest.json`),
        `${JSON.stringify(manifest, null, 2)}\n`,
      );
      out.push({ version: spec.version, file, name, manifest });
    }
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
  return out;
}

/** A copy of `file` with one byte flipped in the middle: the same size, another sha256. */
export function tamperedCopy(file: string, to: string): string {
  copyFileSync(file, to);
  const at = Math.floor(statSync(to).size / 2);
  const fd = openSync(to, 'r+');
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, at);
    b[0] = b[0]! ^ 0xff;
    writeSync(fd, b, 0, 1, at);
  } finally {
    closeSync(fd);
  }
  return to;
}
