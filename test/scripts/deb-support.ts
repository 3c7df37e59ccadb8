/**
 * What dpkg does around the maintainer scripts, on a temporary root (DPKG_ROOT, as `dpkg --root`
 * runs them): the scripts rendered for one version as the release tool renders them, that
 * version's files unpacked (a few stand-ins for its tree), the old version's files deleted.
 */
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderMaintainerScript } from '../../release/package-tree.js';
import { REPO, runScript, type ScriptRun } from './helpers.js';

export interface Package {
  version: string;
  /** Runs one of its maintainer scripts against `root`. */
  script(name: 'preinst' | 'postinst' | 'prerm' | 'postrm', ...args: string[]): Promise<ScriptRun>;
  /** Unpacks its files, as dpkg does between preinst and postinst. */
  unpack(): void;
  /** Deletes its files that the next version does not ship (all of its release tree). */
  removeFiles(): void;
}

export function debPackage(root: string, version: string): Package {
  // Beside what the scripts touch, removed with the root.
  const dir = join(root, `.maintainer-scripts-${version}`);
  mkdirSync(dir, { recursive: true });
  for (const s of ['preinst', 'postinst', 'prerm', 'postrm']) {
    writeFileSync(
      join(dir, s),
      renderMaintainerScript(readFileSync(join(REPO, 'packaging/debian', s), 'utf8'), version),
    );
    chmodSync(join(dir, s), 0o755);
  }
  const release = join(root, 'opt/qrvend/releases', version);
  return {
    version,
    script: (name, ...args) => runScript(join(dir, name), args, { env: { DPKG_ROOT: root } }),
    unpack: () => {
      mkdirSync(join(release, 'share'), { recursive: true });
      mkdirSync(join(release, 'bin'), { recursive: true });
      copyFileSync(join(REPO, 'packaging/config.json.template'), join(release, 'share/config.json.template'));
      writeFileSync(join(release, 'bin/qrvend'), `#!/bin/sh\necho ${version}\n`);
      chmodSync(join(release, 'bin/qrvend'), 0o755);
      writeFileSync(join(release, 'package.json'), JSON.stringify({ version }));
      mkdirSync(join(root, 'opt/qrvend/bin'), { recursive: true });
      for (const [name, from] of [
        ['qrvend-release', 'qrvend-release.sh'],
        ['qrvend-trial', 'qrvend-trial.sh'],
        ['qrvend', 'qrvend-launcher.sh'],
      ] as const) {
        // dpkg writes name.dpkg-new and renames it over the old file: a new inode, never in place.
        rmSync(join(root, 'opt/qrvend/bin', name), { force: true });
        copyFileSync(join(REPO, 'packaging', from), join(root, 'opt/qrvend/bin', name));
        chmodSync(join(root, 'opt/qrvend/bin', name), 0o755);
      }
      mkdirSync(join(root, 'etc/qrvend'), { recursive: true });
      try {
        copyFileSync(
          join(REPO, 'packaging/config.json.template'),
          join(root, 'etc/qrvend/config.json'),
          1 /* COPYFILE_EXCL: dpkg keeps a conffile */,
        );
      } catch {
        // kept
      }
    },
    removeFiles: () => rmSync(release, { recursive: true, force: true }),
  };
}

/** dpkg -i of `next` over `installed` (null: a first install): preinst, unpack, old files gone, postinst. */
export async function dpkgInstall(next: Package, installed: Package | null): Promise<ScriptRun> {
  const pre =
    installed === null
      ? await next.script('preinst', 'install')
      : await next.script('preinst', 'upgrade', installed.version);
  if (pre.code !== 0) return pre;
  next.unpack();
  if (installed !== null && installed.version !== next.version) installed.removeFiles();
  return installed === null
    ? next.script('postinst', 'configure')
    : next.script('postinst', 'configure', installed.version);
}
