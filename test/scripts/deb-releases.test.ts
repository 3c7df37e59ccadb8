/**
 * Side-by-side releases through dpkg's steps (docs/releases.md): an upgrade keeps the release it
 * replaces, older ones are pruned, purge removes them all; an upgrade from the flat layout keeps
 * that one too; an upgrade asks the running agent for an idle restart instead of restarting it.
 * The maintainer scripts run as dpkg runs them, on a temporary root (DPKG_ROOT).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { debPackage, dpkgInstall } from './deb-support.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const link = (root: string, name: string) => readlinkSync(join(root, 'opt/qrvend', name));
const releases = (root: string) => readdirSync(join(root, 'opt/qrvend/releases')).sort();
const restartRequest = (root: string) => join(root, 'var/lib/qrvend/updates/restart.json');

test(
  'install, two upgrades, purge: current switches, the replaced release is ' +
    'kept byte for byte, older ones go, restart.json instead of a restart',
  T,
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'qrvend-deb-releases-'));
    try {
      const [v1, v2, v3] = ['0.1.0', '0.2.0', '0.3.0'].map((v) => debPackage(root, v)) as [
        ReturnType<typeof debPackage>,
        ReturnType<typeof debPackage>,
        ReturnType<typeof debPackage>,
      ];
      const first = await dpkgInstall(v1, null);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(link(root, 'current'), 'releases/0.1.0');
      assert.equal(existsSync(join(root, 'opt/qrvend/previous')), false);
      assert.equal(existsSync(restartRequest(root)), false, 'a first install has no agent to restart');
      // Something of the running release that dpkg does not know about survives too (a hard link).
      writeFileSync(join(root, 'opt/qrvend/releases/0.1.0/marker'), 'v1 tree');
      const inode = statSync(join(root, 'opt/qrvend/releases/0.1.0/bin/qrvend')).ino;

      const up = await dpkgInstall(v2, v1);
      assert.equal(up.code, 0, up.stderr);
      assert.equal(link(root, 'current'), 'releases/0.2.0');
      assert.equal(link(root, 'previous'), 'releases/0.1.0');
      assert.deepEqual(releases(root), ['0.1.0', '0.2.0'], 'no .keep-* left behind');
      assert.equal(readFileSync(join(root, 'opt/qrvend/releases/0.1.0/bin/qrvend'), 'utf8'), '#!/bin/sh\necho 0.1.0\n');
      assert.equal(
        statSync(join(root, 'opt/qrvend/releases/0.1.0/bin/qrvend')).ino,
        inode,
        'kept by hard links, not copied',
      );
      assert.equal(readFileSync(join(root, 'opt/qrvend/releases/0.1.0/marker'), 'utf8'), 'v1 tree');
      const request = JSON.parse(readFileSync(restartRequest(root), 'utf8')) as {
        version: string;
        requestedAt: string;
      };
      assert.equal(request.version, '0.2.0');
      assert.match(request.requestedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

      const up2 = await dpkgInstall(v3, v2);
      assert.equal(up2.code, 0, up2.stderr);
      assert.equal(link(root, 'current'), 'releases/0.3.0');
      assert.equal(link(root, 'previous'), 'releases/0.2.0');
      assert.deepEqual(releases(root), ['0.2.0', '0.3.0'], 'the release before the previous one is pruned');
      assert.equal(JSON.parse(readFileSync(restartRequest(root), 'utf8')).version, '0.3.0');

      // Reinstalling the same version keeps both.
      const again = await dpkgInstall(v3, v3);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(releases(root), ['0.2.0', '0.3.0']);
      assert.equal(link(root, 'current'), 'releases/0.3.0');
      assert.equal(link(root, 'previous'), 'releases/0.2.0');

      // remove keeps what dpkg does not own; purge removes every release, the links and the trial state.
      mkdirSync(join(root, 'var/lib/qrvend-release'), { recursive: true });
      writeFileSync(join(root, 'var/lib/qrvend-release/trial.json'), '{}');
      assert.equal((await v3.script('prerm', 'remove')).code, 0);
      v3.removeFiles();
      assert.equal((await v3.script('postrm', 'remove')).code, 0);
      assert.deepEqual(releases(root), ['0.2.0']);
      assert.equal((await v3.script('postrm', 'purge')).code, 0);
      for (const gone of [
        'opt/qrvend/releases',
        'opt/qrvend/current',
        'opt/qrvend/previous',
        'var/lib/qrvend-release',
        'var/lib/qrvend',
      ]) {
        assert.equal(existsSync(join(root, gone)), false, `${gone} after purge`);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
);

test(
  'an upgrade from the flat layout keeps that release as the previous ' +
    'one, and restarts its agent as before (it knows no restart request)',
  T,
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'qrvend-deb-flat-'));
    try {
      const opt = join(root, 'opt/qrvend');
      for (const f of [
        'dist/src/cli/main.js',
        'node_modules/x/index.js',
        'node/bin/node',
        'package.json',
        'share/config.json.template',
        'bin/qrvend',
      ]) {
        mkdirSync(join(opt, f, '..'), { recursive: true });
        writeFileSync(join(opt, f), `flat ${f}`);
      }
      chmodSync(join(opt, 'bin/qrvend'), 0o755);
      mkdirSync(join(root, 'etc/qrvend'), { recursive: true });
      writeFileSync(join(root, 'etc/qrvend/config.json'), '{}');
      const v2 = debPackage(root, '0.2.0');
      const pre = await v2.script('preinst', 'upgrade', '0.1.0');
      assert.equal(pre.code, 0, pre.stderr);
      // dpkg unpacks 0.2.0 (its launcher replaces bin/qrvend) and deletes the flat release's files.
      v2.unpack();
      for (const f of ['dist', 'node_modules', 'node', 'package.json', 'share'])
        rmSync(join(opt, f), { recursive: true, force: true });
      const post = await v2.script('postinst', 'configure', '0.1.0');
      assert.equal(post.code, 0, post.stderr);
      assert.equal(link(root, 'current'), 'releases/0.2.0');
      assert.equal(link(root, 'previous'), 'releases/0.1.0');
      assert.equal(readFileSync(join(opt, 'releases/0.1.0/dist/src/cli/main.js'), 'utf8'), 'flat dist/src/cli/main.js');
      assert.equal(
        readFileSync(join(opt, 'releases/0.1.0/bin/qrvend'), 'utf8'),
        'flat bin/qrvend',
        "the flat release's own wrapper, not the new launcher",
      );
      assert.equal(existsSync(join(opt, 'releases/0.1.0/.flat')), false);
      assert.equal(existsSync(restartRequest(root)), false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
);

test('needrestart is told to leave the agent alone', T, () => {
  const conf = readFileSync(new URL('../../../packaging/needrestart.conf', import.meta.url), 'utf8');
  // needrestart's override for one service: a regular expression on the unit's name, 0 = never restart.
  assert.match(conf, /^\$nrconf\{override_rc\}->\{qr\(\^qrvend\\\.service\$\)\} = 0;$/m);
});
