/**
 * The installed file tree of a release, staged under a directory that stands for `/`, and the
 * two artifacts made from it: the .deb (dpkg-deb) and the tarball (the same tree without /etc,
 * for image builders that do not run dpkg, and the artifact of a remote update).
 *
 * Side by side (docs/releases.md): everything of one version lives in
 * /opt/qrvend/releases/<version>; /opt/qrvend/current links to the one that runs. Outside the
 * releases sit only what must outlive any one of them: the launcher (bin/qrvend, through
 * `current`), and the root-side scripts around every start (bin/qrvend-trial, bin/qrvend-release),
 * which a remote update never replaces, so that a bad release cannot break its own rollback.
 */
import {
  chmodSync,
  copyFileSync,
  cpSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { debDepends, type ReleaseTarget } from './targets.js';
import type { NodeRuntime } from './node-runtime.js';
import { run } from './run.js';

export const TECHNICIAN_SCRIPTS = ['qrvend-logs', 'qrvend-serial-trace', 'qrvend-test-vend'] as const;
export const CONFFILES = ['/etc/qrvend/config.json', '/etc/needrestart/conf.d/qrvend.conf'] as const;
export const MAINTAINER_SCRIPTS = ['preinst', 'postinst', 'prerm', 'postrm'] as const;
/** Where a version's tree lives, relative to the staged root (and to `/` on the machine). */
export const releaseDir = (version: string): string => `opt/qrvend/releases/${version}`;

/** The maintainer scripts name the version they install: `@VERSION@` in packaging/debian. */
export function renderMaintainerScript(text: string, version: string): string {
  return text.replaceAll('@VERSION@', version);
}

export interface StageOptions {
  repo: string;
  root: string;
  target: ReleaseTarget;
  runtime: NodeRuntime;
  modulesDir: string;
  version: string;
}

export async function stageTree(o: StageOptions): Promise<void> {
  rmSync(o.root, { recursive: true, force: true });
  const opt = join(o.root, releaseDir(o.version));
  const stable = join(o.root, 'opt/qrvend/bin');
  mkdirSync(join(opt, 'bin'), { recursive: true });
  mkdirSync(stable, { recursive: true });
  // Compiled once for every architecture: dist is plain JavaScript. Only dist/src: the agent, the CLI
  // and the technician's simulators; the test and bench rigs (dist/rigs) and the tests stay out.
  cpSync(join(o.repo, 'dist/src'), join(opt, 'dist/src'), { recursive: true, filter: (src) => !src.endsWith('.map') });
  // ...except the project's own C (the pty relay behind the serial trace, the daemon's sd_notify
  // helper): compiled for the target.
  const cc = o.target.toolchainPrefix === null ? 'cc' : `${o.target.toolchainPrefix}-gcc`;
  mkdirSync(join(opt, 'dist/src/native'), { recursive: true });
  for (const [source, binary] of [
    ['pty-relay.c', 'qrvend-pty'],
    ['notify-helper.c', 'qrvend-notify'],
  ] as const) {
    const out = join(opt, 'dist/src/native', binary);
    rmSync(out, { force: true });
    await run(cc, ['-O2', '-Wall', '-Wextra', '-o', out, join(o.repo, 'native', source)], { timeoutMs: 120_000 });
  }
  // The Node-API addons (malloc_trim, the GPIO character device), against the headers of the Node the release carries.
  for (const [source, addon] of [
    ['malloc-trim.c', 'qrvend-trim.node'],
    ['gpio-chardev.c', 'qrvend-gpio.node'],
  ] as const) {
    const out = join(opt, 'dist/src/native', addon);
    rmSync(out, { force: true });
    const include = join(o.runtime.dir, 'include/node');
    await run(
      cc,
      ['-O2', '-Wall', '-Wextra', '-shared', '-fPIC', '-I', include, '-o', out, join(o.repo, 'native', source)],
      { timeoutMs: 120_000 },
    );
  }
  cpSync(join(o.repo, 'config'), join(opt, 'config'), { recursive: true });
  for (const f of ['package.json', 'package-lock.json', 'README.md']) copyFileSync(join(o.repo, f), join(opt, f));
  mkdirSync(join(opt, 'docs'), { recursive: true });
  // The guides the units' Documentation= lines and `qrvend --help` point at.
  for (const d of ['install.md', 'fleet.md', 'relay.md']) copyFileSync(join(o.repo, 'docs', d), join(opt, 'docs', d));
  // cp -a keeps the modules' symlinks (.bin) and modes; much faster than a JS copy of ~2,000 files.
  await run('cp', ['-a', o.modulesDir, join(opt, 'node_modules')]);
  rmSync(join(opt, 'node_modules/.qrvend-release-complete'), { force: true });
  rmSync(join(opt, 'node_modules/.package-lock.json'), { force: true });

  // Node itself: the binary and its licence; headers, npm and docs stay out.
  mkdirSync(join(opt, 'node/bin'), { recursive: true });
  copyFileSync(join(o.runtime.dir, 'bin/node'), join(opt, 'node/bin/node'));
  chmodSync(join(opt, 'node/bin/node'), 0o755);
  copyFileSync(join(o.runtime.dir, 'LICENSE'), join(opt, 'node/LICENSE'));

  copyFileSync(join(o.repo, 'packaging/qrvend-wrapper.sh'), join(opt, 'bin/qrvend'));
  chmodSync(join(opt, 'bin/qrvend'), 0o755);
  // Outside the releases: the launcher through `current`, and the unit's ExecStartPre/ExecStopPost
  // (the trial of a configuration change, the activation and trial of a new release).
  const stableFiles = {
    qrvend: 'qrvend-launcher.sh',
    'qrvend-trial': 'qrvend-trial.sh',
    'qrvend-release': 'qrvend-release.sh',
  };
  for (const [name, from] of Object.entries(stableFiles)) {
    copyFileSync(join(o.repo, 'packaging', from), join(stable, name));
    chmodSync(join(stable, name), 0o755);
  }
  mkdirSync(join(opt, 'scripts'));
  for (const s of TECHNICIAN_SCRIPTS) {
    copyFileSync(join(o.repo, 'scripts', s), join(opt, 'scripts', s));
    chmodSync(join(opt, 'scripts', s), 0o755);
  }
  mkdirSync(join(opt, 'share'));
  copyFileSync(join(o.repo, 'packaging/config.json.template'), join(opt, 'share/config.json.template'));
  copyFileSync(join(o.repo, 'config/relay.example.json'), join(opt, 'share/relay.example.json'));

  mkdirSync(join(o.root, 'usr/bin'), { recursive: true });
  symlinkSync('/opt/qrvend/bin/qrvend', join(o.root, 'usr/bin/qrvend'));
  for (const s of TECHNICIAN_SCRIPTS) symlinkSync(`/opt/qrvend/current/scripts/${s}`, join(o.root, 'usr/bin', s));
  const sysd = (from: string, to: string) => {
    mkdirSync(join(o.root, to, '..'), { recursive: true });
    copyFileSync(join(o.repo, from), join(o.root, to));
  };
  sysd('systemd/qrvend.service', 'usr/lib/systemd/system/qrvend.service');
  // The Start relay's unit ships disabled: an operator runs the relay on one or two servers, not on every machine.
  sysd('systemd/qrvend-relay.service', 'usr/lib/systemd/system/qrvend-relay.service');
  sysd('packaging/qrvend.sysusers', 'usr/lib/sysusers.d/qrvend.conf');
  sysd('packaging/qrvend.tmpfiles', 'usr/lib/tmpfiles.d/qrvend.conf');
  sysd('packaging/qrvend-gpio.rules', 'usr/lib/udev/rules.d/60-qrvend-gpio.rules');
  mkdirSync(join(o.root, 'usr/share/doc/qrvend'), { recursive: true });
  writeFileSync(join(o.root, 'usr/share/doc/qrvend/copyright'), copyright(o.runtime));
  normaliseModes(o.root);
}

/** dpkg-deb of the staged tree; returns the package's path. */
export async function buildDeb(o: StageOptions, outDir: string, compression: 'xz' | 'gzip'): Promise<string> {
  // The conffiles live only in the .deb (the tarball leaves /etc to the image builder).
  mkdirSync(join(o.root, 'etc/qrvend'), { recursive: true });
  copyFileSync(join(o.repo, 'packaging/config.json.template'), join(o.root, 'etc/qrvend/config.json'));
  chmodSync(join(o.root, 'etc/qrvend/config.json'), 0o644);
  // A stock needrestart must not restart the agent after an upgrade: the agent restarts itself
  // when the machine is idle (postinst's restart request).
  mkdirSync(join(o.root, 'etc/needrestart/conf.d'), { recursive: true });
  copyFileSync(join(o.repo, 'packaging/needrestart.conf'), join(o.root, 'etc/needrestart/conf.d/qrvend.conf'));
  chmodSync(join(o.root, 'etc/needrestart/conf.d/qrvend.conf'), 0o644);
  const control = join(o.root, 'DEBIAN');
  mkdirSync(control, { mode: 0o755 });
  const installedKb = Math.ceil(treeBytes(o.root) / 1024);
  writeFileSync(join(control, 'control'), controlFile(o.target, o.version, installedKb));
  writeFileSync(join(control, 'conffiles'), `${CONFFILES.join('\n')}\n`);
  for (const s of MAINTAINER_SCRIPTS) {
    writeFileSync(
      join(control, s),
      renderMaintainerScript(readFileSync(join(o.repo, 'packaging/debian', s), 'utf8'), o.version),
    );
    chmodSync(join(control, s), 0o755);
  }
  const deb = join(outDir, `qrvend_${o.version}_${o.target.deb}.deb`);
  await run('dpkg-deb', ['--root-owner-group', `-Z${compression}`, '--build', o.root, deb], { timeoutMs: 900_000 });
  rmSync(control, { recursive: true, force: true });
  rmSync(join(o.root, 'etc'), { recursive: true, force: true });
  return deb;
}

/**
 * The same tree as a tarball (opt/, usr/), owned by root: for images built without dpkg (with the
 * `current` link the .deb's postinst would make), and the artifact of a remote update, of which
 * the root side extracts only opt/qrvend/releases/<version>.
 */
export async function buildTarball(o: StageOptions, outDir: string): Promise<string> {
  const tgz = join(outDir, tarballName(o.version, o.target));
  const current = join(o.root, 'opt/qrvend/current');
  symlinkSync(`releases/${o.version}`, current);
  try {
    await run(
      'tar',
      ['--owner=0', '--group=0', '--numeric-owner', '--sort=name', '-czf', tgz, '-C', o.root, 'opt', 'usr'],
      { timeoutMs: 900_000 },
    );
  } finally {
    rmSync(current, { force: true });
  }
  return tgz;
}

/** The update manifest's artifact name (src/fleet/contract/manifest-schema.ts ARTIFACT_NAME). */
export function tarballName(version: string, target: ReleaseTarget): string {
  return `qrvend_${version}_${target.deb}.tar.gz`;
}

export function controlFile(target: ReleaseTarget, version: string, installedKb: number): string {
  return [
    'Package: qrvend',
    `Version: ${version}`,
    `Architecture: ${target.deb}`,
    'Maintainer: qrvend maintainers <qrvend@localhost>',
    'Section: misc',
    'Priority: optional',
    `Installed-Size: ${installedKb}`,
    `Depends: ${debDepends(target)}`,
    'Description: QR-payment agent for vending machines',
    ' An MDB cashless reader (through an MDB adapter board) that takes Static QR and',
    ' Dynamic QR payments and settles every sale with the payment gateway, offline-safe.',
    ` Node ${target.nodeVersion} is bundled under /opt/qrvend/node; native modules are built for it.`,
    ' Runs as the qrvend systemd service; technician tools: qrvend doctor, qrvend-logs,',
    ' qrvend-serial-trace, qrvend-test-vend.',
    '',
  ].join('\n');
}

function copyright(runtime: NodeRuntime): string {
  return [
    'qrvend: all rights reserved by its owners (UNLICENSED).',
    `Bundled: Node.js ${runtime.version} under /opt/qrvend/node (licence: /opt/qrvend/node/LICENSE);`,
    'npm packages under /opt/qrvend/node_modules, each under the licence in its own directory.',
    '',
  ].join('\n');
}

/** Directories 0755, files 0644 or 0755 (any execute bit kept), whatever this checkout's umask was. */
function normaliseModes(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) {
      chmodSync(path, 0o755);
      normaliseModes(path);
    } else if (entry.isFile()) {
      chmodSync(path, statSync(path).mode & 0o111 ? 0o755 : 0o644);
    }
  }
}

function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += treeBytes(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

export function readVersion(repo: string): string {
  return (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
}
