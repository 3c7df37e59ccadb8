/**
 * `npm run release` on a build machine without the cross compilers (docs/decisions/smallest-boards.md item 5): it stops
 * before downloading or compiling anything, names each missing command and the apt-get line that
 * installs it, and shows no stack. The real release entry point, PATH reduced to a directory of
 * stand-ins for the tools that are there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { missingTools, toolsFor } from '../../release/build-tools.js';
import { TARGETS } from '../../release/targets.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const RELEASE_MAIN = fileURLToPath(new URL('../../release/main.js', import.meta.url));

/** A PATH directory holding an executable stand-in for each command. */
function binDir(commands: string[]): { dir: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-buildtools-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const c of commands) {
    writeFileSync(join(bin, c), '#!/bin/sh\nexit 0\n');
    chmodSync(join(bin, c), 0o755);
  }
  return { dir: bin, done: () => rmSync(dir, { recursive: true, force: true }) };
}

const COMMON = ['gcc', 'g++', 'make', 'python3', 'dpkg-deb', 'tar'];

test('each target needs the common tools and its own cross compiler', () => {
  assert.deepEqual(
    toolsFor([TARGETS.amd64]).map((t) => t.command),
    COMMON,
  );
  assert.deepEqual(
    toolsFor([TARGETS.arm64, TARGETS.armhf, TARGETS.arm64])
      .map((t) => `${t.command}:${t.apt}`)
      .slice(COMMON.length),
    [
      'aarch64-linux-gnu-gcc:g++-aarch64-linux-gnu',
      'aarch64-linux-gnu-g++:g++-aarch64-linux-gnu',
      'arm-linux-gnueabihf-gcc:g++-arm-linux-gnueabihf',
      'arm-linux-gnueabihf-g++:g++-arm-linux-gnueabihf',
    ],
  );
  const all = binDir([...COMMON, 'aarch64-linux-gnu-gcc', 'aarch64-linux-gnu-g++']);
  try {
    assert.deepEqual(missingTools([TARGETS.arm64, TARGETS.amd64], all.dir), []);
    assert.deepEqual(
      missingTools([TARGETS.armhf], all.dir).map((t) => t.command),
      ['arm-linux-gnueabihf-gcc', 'arm-linux-gnueabihf-g++'],
    );
    // A file that is not executable is not a compiler.
    chmodSync(join(all.dir, 'make'), 0o644);
    assert.deepEqual(
      missingTools([TARGETS.amd64], all.dir).map((t) => t.command),
      ['make'],
    );
  } finally {
    all.done();
  }
});

test(
  'npm run release without the cross compilers: the apt-get line, no stack, nothing downloaded',
  { timeout: TEST_DEADLINE_MS },
  () => {
    const bin = binDir(COMMON);
    const scratch = mkdtempSync(join(tmpdir(), 'qrvend-release-'));
    try {
      const cache = join(scratch, 'cache');
      const out = join(scratch, 'out');
      const r = spawnSync(process.execPath, [RELEASE_MAIN, '--arch', 'arm64,armhf', '--cache', cache, '--out', out], {
        env: { PATH: bin.dir, HOME: scratch },
        encoding: 'utf8',
        timeout: 50_000,
      });
      assert.equal(r.status, 1, `exit ${r.status}; stderr: ${r.stderr}`);
      assert.equal(r.stdout, '', 'no package was made');
      assert.match(r.stderr, /aarch64-linux-gnu-gcc \(cross compiler for arm64\)/);
      assert.match(r.stderr, /arm-linux-gnueabihf-g\+\+ \(cross compiler for armhf\)/);
      assert.match(
        r.stderr,
        /^ {2}sudo apt-get install -y --no-install-recommends g\+\+-aarch64-linux-gnu g\+\+-arm-linux-gnueabihf$/m,
      );
      assert.doesNotMatch(r.stderr, /^\s+at /m, 'a stack trace');
      assert.ok(
        !existsSync(cache) || readdirSync(cache).length === 0,
        'something was downloaded or built before the check',
      );
    } finally {
      bin.done();
      rmSync(scratch, { recursive: true, force: true });
    }
  },
);
