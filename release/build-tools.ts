/**
 * What `npm run release` needs on the build machine, checked before anything is downloaded or
 * compiled (docs/decisions/smallest-boards.md item 5: without the cross compilers a newcomer got node-gyp's raw stack,
 * "aarch64-linux-gnu-gcc: not found", minutes into the build). Each missing command is named with
 * the Debian package that provides it, so the message is the apt-get line docs/install.md shows.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { ReleaseTarget } from './targets.js';

export interface BuildTool {
  command: string;
  /** The Debian package that provides it. */
  apt: string;
  /** What the release uses it for (shown when it is missing). */
  why: string;
}

const COMMON: BuildTool[] = [
  { command: 'gcc', apt: 'g++', why: "the project's own C helpers" },
  { command: 'g++', apt: 'g++', why: 'node-gyp (host)' },
  { command: 'make', apt: 'make', why: 'node-gyp' },
  { command: 'python3', apt: 'python3', why: 'node-gyp' },
  { command: 'dpkg-deb', apt: 'dpkg', why: 'the .deb' },
  { command: 'tar', apt: 'tar', why: 'the tarball' },
];

/** The commands the given targets need, each once, in a stable order. */
export function toolsFor(targets: readonly ReleaseTarget[]): BuildTool[] {
  const tools = [...COMMON];
  for (const t of targets) {
    const p = t.toolchainPrefix;
    if (p === null) continue;
    // g++-<prefix> brings gcc-<prefix> and binutils-<prefix> (ar, ranlib, strip) along.
    for (const suffix of ['gcc', 'g++'])
      tools.push({ command: `${p}-${suffix}`, apt: `g++-${p}`, why: `cross compiler for ${t.deb}` });
  }
  return tools.filter((tool, i) => tools.findIndex((other) => other.command === tool.command) === i);
}

/** Whether `command` is an executable file in one of PATH's directories. */
export function onPath(command: string, path: string | undefined): boolean {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const file = join(dir, command);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return true;
    } catch {
      // not here
    }
  }
  return false;
}

export function missingTools(targets: readonly ReleaseTarget[], path: string | undefined): BuildTool[] {
  return toolsFor(targets).filter((tool) => !onPath(tool.command, path));
}

/** The message for a build that cannot start: what is missing, for what, and the one apt-get line. */
export function missingToolsMessage(missing: readonly BuildTool[]): string {
  const packages = [...new Set(missing.map((t) => t.apt))];
  return [
    `this machine lacks what the build needs: ${missing.map((t) => `${t.command} (${t.why})`).join(', ')}.`,
    'Install it (Debian/Ubuntu), then run the release again:',
    `  sudo apt-get install -y --no-install-recommends ${packages.join(' ')}`,
    'docs/install.md, "What the build machine needs", lists everything ' +
      '(qemu-user-static, optional, also loads the arm modules before they ship).',
  ].join('\n');
}
