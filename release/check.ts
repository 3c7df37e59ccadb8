/**
 * Inspects a built release (.deb or .tar.gz) the way an installer would see it: control fields
 * (dpkg-deb -I), conffiles, the file list (dpkg-deb -c), and the machine of every ELF file in it,
 * which must be the package's architecture (nothing x86 in an arm64 package). The rules are pure
 * functions over what the tools print, so the unit tests feed them small fixtures.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ELF_HEADER_BYTES, machineName, readElfIdentity } from './elf.js';
import { TARGETS, debDepends, isReleaseArch, type ReleaseTarget } from './targets.js';
import { CONFFILES, MAINTAINER_SCRIPTS, releaseDir } from './package-tree.js';
import { run } from './run.js';

export interface FileHead {
  /** Path inside the package, e.g. opt/qrvend/node/bin/node. */
  path: string;
  head: Uint8Array;
}

/** Files every release carries in its own tree, opt/qrvend/releases/<version>/ (docs/releases.md). */
export const RELEASE_FILES = [
  'node/bin/node',
  'bin/qrvend',
  'dist/src/cli/main.js',
  'dist/src/native/qrvend-pty', // the pty relay behind qrvend-serial-trace, built for the target
  'dist/src/native/qrvend-notify', // the daemon's sd_notify helper, built for the target
  'dist/src/native/qrvend-trim.node', // the daemon's malloc_trim (Node-API addon), built for the target
  'dist/src/native/qrvend-gpio.node', // the GPIO character device backend (Node-API addon), built for the target
  'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
] as const;

/** Files outside every release: they outlive any one of them. */
export const STABLE_FILES = [
  'opt/qrvend/bin/qrvend', // the launcher, through /opt/qrvend/current
  'opt/qrvend/bin/qrvend-trial', // the unit's ExecStartPre/ExecStopPost
  'opt/qrvend/bin/qrvend-release',
  'usr/lib/systemd/system/qrvend.service',
  'usr/lib/systemd/system/qrvend-relay.service',
  'usr/lib/sysusers.d/qrvend.conf',
  'usr/lib/udev/rules.d/60-qrvend-gpio.rules', // /dev/gpiochip* to group gpio (the chardev backend)
] as const;

/** Every file a release of this version must carry, as paths inside the package. */
export function requiredFiles(version: string): string[] {
  return [...RELEASE_FILES.map((f) => `${releaseDir(version)}/${f}`), ...STABLE_FILES];
}

/** Every ELF file must be for the target's machine and word size; at least Node itself must be there. */
export function elfProblems(files: readonly FileHead[], target: ReleaseTarget): string[] {
  const problems: string[] = [];
  let elfCount = 0;
  for (const f of files) {
    let id;
    try {
      id = readElfIdentity(f.head);
    } catch (err) {
      problems.push(`${f.path}: ${(err as Error).message}`);
      continue;
    }
    if (id === null) continue;
    elfCount += 1;
    if (id.machine !== target.elfMachine || id.elfClass !== target.elfClass || !id.littleEndian) {
      problems.push(
        `${f.path}: ELF for ${machineName(id.machine)} (${id.elfClass}-bit` +
          `${id.littleEndian ? '' : ', big-endian'}), package is ${target.deb} ` +
          `(${machineName(target.elfMachine)}, ${target.elfClass}-bit)`,
      );
    }
  }
  if (elfCount === 0) problems.push('no ELF file at all: Node and the native modules are missing');
  return problems;
}

/** Parses `dpkg-deb --info`'s control fields (or a control file): "Name: value" with continuation lines. */
export function parseControl(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  let last: string | undefined;
  for (const line of text.split('\n')) {
    const m = /^\s?([A-Za-z][A-Za-z0-9-]*):\s?(.*)$/.exec(line);
    if (m !== null && !line.startsWith('  ')) {
      last = m[1]!;
      fields[last] = m[2]!.trim();
    } else if (last !== undefined && /^\s/.test(line) && line.trim() !== '') {
      fields[last] += `\n${line.trim()}`;
    }
  }
  return fields;
}

/** Paths (without the leading ./) from `dpkg-deb --contents` or `tar -tvf` lines; symlinks lose their " -> target". */
export function parseContents(listing: string): string[] {
  const paths: string[] = [];
  for (const line of listing.split('\n')) {
    const m = /^\S+\s+\S+\s+\d+\s+\S+\s+\S+\s+(.*)$/.exec(line.trim());
    if (m === null) continue;
    const path = m[1]!
      .replace(/ -> .*$/, '')
      .replace(/^\.\//, '')
      .replace(/\/$/, '');
    if (path !== '' && path !== '.') paths.push(path);
  }
  return paths;
}

export interface DebFacts {
  fields: Record<string, string>;
  conffiles: string[];
  controlMembers: string[];
  paths: string[];
}

export function debProblems(deb: DebFacts, fileName: string): string[] {
  const problems: string[] = [];
  const arch = deb.fields.Architecture ?? '';
  if (!isReleaseArch(arch)) return [`Architecture '${arch}' is not a release architecture`];
  if (deb.fields.Package !== 'qrvend') problems.push(`Package is '${deb.fields.Package ?? ''}', not qrvend`);
  const expectedName = `qrvend_${deb.fields.Version ?? '?'}_${arch}.deb`;
  if (fileName !== expectedName) problems.push(`file is named ${fileName}, its fields say ${expectedName}`);
  const depends = debDepends(TARGETS[arch]);
  if (deb.fields.Depends !== depends) problems.push(`Depends is '${deb.fields.Depends ?? ''}', expected '${depends}'`);
  if (/\bnodejs\b/.test(deb.fields.Depends ?? '') || /\bnodejs\b/.test(deb.fields['Pre-Depends'] ?? ''))
    problems.push('depends on nodejs: Node is bundled');
  for (const c of CONFFILES) {
    if (!deb.conffiles.includes(c)) problems.push(`conffiles does not list ${c}`);
  }
  for (const c of deb.conffiles) {
    if (!deb.paths.includes(c.replace(/^\//, ''))) problems.push(`conffile ${c} is not in the package`);
  }
  for (const s of MAINTAINER_SCRIPTS) {
    if (!deb.controlMembers.includes(s)) problems.push(`maintainer script ${s} is missing`);
  }
  problems.push(...treeProblems(deb.paths, deb.fields.Version ?? '?'));
  if (deb.paths.includes('etc/qrvend/secret-token'))
    problems.push('ships /etc/qrvend/secret-token: the secret is provisioned on the machine, never packaged');
  return problems;
}

/**
 * The packages only the development side needs: those package-lock.json marks `dev` (a
 * devDependency that a runtime package also needs, like mqtt-packet under mqtt, is not marked and
 * ships). Read from this checkout's lockfile, the one `npm ci --omit=dev` staged the release from.
 */
export function devOnlyPackages(
  lockPath = fileURLToPath(new URL('../../package-lock.json', import.meta.url)),
): Set<string> {
  const lock = JSON.parse(readFileSync(lockPath, 'utf8')) as { packages?: Record<string, { dev?: boolean }> };
  const names = new Set<string>();
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    const name = /^node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(path)?.[1];
    if (name !== undefined && entry.dev === true) names.add(name);
  }
  return names;
}

/** Rules for the file list shared by the .deb and the tarball. */
export function treeProblems(
  paths: readonly string[],
  version: string,
  devOnly: ReadonlySet<string> = devOnlyPackages(),
): string[] {
  const problems: string[] = [];
  const set = new Set(paths);
  for (const f of requiredFiles(version)) if (!set.has(f)) problems.push(`${f} is missing`);
  const release = `${releaseDir(version)}/`;
  for (const p of paths) {
    const pkg = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)(?:\/|$)/.exec(p)?.[1];
    if (pkg !== undefined && devOnly.has(pkg)) {
      problems.push(`${p}: a development dependency is shipped (${pkg} is dev-only in package-lock.json)`);
      break;
    }
    if (p.startsWith(`${release}dist/test/`)) {
      problems.push(`tests are shipped (${release}dist/test)`);
      break;
    }
    if (p.startsWith(`${release}dist/rigs/`)) {
      problems.push(`rigs are shipped (${release}dist/rigs: the test and bench rigs, never in a release)`);
      break;
    }
  }
  // Side by side: outside the release's own tree, /opt/qrvend holds only the stable entry points.
  const stray = paths.find(
    (p) =>
      p.startsWith('opt/qrvend/') &&
      !p.startsWith(release) &&
      p !== releaseDir(version) &&
      !/^opt\/qrvend\/(bin(\/qrvend(-trial|-release)?)?|releases|current)$/.test(p),
  );
  if (stray !== undefined)
    problems.push(`${stray}: outside ${release} (a release's files live in its own tree, docs/releases.md)`);
  return problems;
}

/** The target and version of a tarball, from its name (qrvend_<version>_<arch>.tar.gz). */
export function tarballTarget(fileName: string): { target: ReleaseTarget; version: string } | null {
  const m = /^qrvend_(.+)_([a-z0-9]+)\.tar\.gz$/.exec(fileName);
  if (m === null) return null;
  const arch = m[2]!;
  return isReleaseArch(arch) ? { target: TARGETS[arch], version: m[1]! } : null;
}

/** Reads the first bytes of every regular file under `dir`. */
export function readHeads(dir: string): FileHead[] {
  const heads: FileHead[] = [];
  const visit = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.isFile()) {
        const fd = openSync(path, 'r');
        try {
          const buf = Buffer.alloc(ELF_HEADER_BYTES);
          const n = readSync(fd, buf, 0, ELF_HEADER_BYTES, 0);
          heads.push({ path: relative(dir, path), head: buf.subarray(0, n) });
        } finally {
          closeSync(fd);
        }
      }
    }
  };
  visit(dir);
  return heads;
}

/** Every problem found in one .deb or .tar.gz; empty when it is fit to ship. */
export async function checkArtifact(file: string): Promise<string[]> {
  const name = basename(file);
  const tmp = mkdtempSync(join(tmpdir(), 'qrvend-release-check-'));
  try {
    if (name.endsWith('.deb')) {
      const info = await run('dpkg-deb', ['--field', file], { capture: true });
      const listing = await run('dpkg-deb', ['--contents', file], { capture: true });
      await run('dpkg-deb', ['--control', file, join(tmp, 'control')]);
      const conffilesPath = join(tmp, 'control/conffiles');
      const deb: DebFacts = {
        fields: parseControl(info),
        conffiles: existsSync(conffilesPath)
          ? readFileSync(conffilesPath, 'utf8')
              .split('\n')
              .map((l) => l.trim())
              .filter(Boolean)
          : [],
        controlMembers: readdirSync(join(tmp, 'control')),
        paths: parseContents(listing),
      };
      const problems = debProblems(deb, name);
      const arch = deb.fields.Architecture ?? '';
      if (!isReleaseArch(arch)) return problems;
      await run('dpkg-deb', ['--extract', file, join(tmp, 'data')], { timeoutMs: 600_000 });
      return [...problems, ...elfProblems(readHeads(join(tmp, 'data')), TARGETS[arch])];
    }
    const tarball = tarballTarget(name);
    if (tarball === null) return [`${name}: not a qrvend .deb or qrvend_<version>_<arch>.tar.gz`];
    const { target, version } = tarball;
    const listing = await run('tar', ['-tvzf', file], { capture: true });
    const paths = parseContents(listing);
    const problems = treeProblems(paths, version);
    // What the root side of a remote update extracts, and what an image builder's `current` is.
    if (!listing.split('\n').some((line) => line.trimEnd().endsWith(` opt/qrvend/current -> releases/${version}`))) {
      problems.push(`opt/qrvend/current does not link to releases/${version}`);
    }
    if (paths.some((p) => p.startsWith('etc/')))
      problems.push("the tarball carries /etc: configuration is the image builder's, never overwritten");
    await run('tar', ['-xzf', file, '-C', tmp], { timeoutMs: 600_000 });
    return [...problems, ...elfProblems(readHeads(tmp), target)];
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
