/**
 * scripts/install.sh into a temporary root: the tree, its modes, the enabled unit, production
 * dependencies only, an idempotent second run that keeps the technician's config and token.
 * Needs a build (npm test compiles first) and node_modules, as on a build machine.
 *
 * In the slow tier (`npm run test:slow`, docs/testing.md): each install copies the whole
 * node_modules before pruning it (hundreds of MB), four times here, 1 to 2 min of disk and CPU.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  existsSync,
  lstatSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  statSync,
  writeFileSync,
  mkdtempSync,
  rmSync,
} from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, runScript } from './helpers.js';
import { loadConfig } from '../../src/config/load.js';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../support/deadlines.js';

const INSTALL = join(REPO, 'scripts/install.sh');
/**
 * One install.sh run, with the hang guard of any child a test spawns (test/support/deadlines.ts):
 * a run copies the whole node_modules and prunes it, over a minute beside the slow tier's crash
 * run on a loaded machine. Each test's own deadline covers its runs.
 */
const runInstall = (args: string[]) => runScript(INSTALL, args, { timeoutMs: CHILD_DEADLINE_MS });

function mode(path: string): number {
  return statSync(path).mode & 0o7777;
}

function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test(
  'install.sh --root builds the image tree, enables the unit, and a second run changes nothing a technician owns',
  { timeout: TEST_DEADLINE_MS + 3 * CHILD_DEADLINE_MS },
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'qrvend-install-'));
    try {
      const first = await runInstall(['--root', root]);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /created \/etc\/qrvend\/config\.json/);

      // The release: compiled code, defaults, package.json; production dependencies only.
      const opt = join(root, 'opt/qrvend');
      for (const f of ['dist/src/cli/main.js', 'config/default.json', 'package.json', 'share/config.json.template']) {
        assert.ok(existsSync(join(opt, f)), `missing /opt/qrvend/${f}`);
      }
      assert.equal(existsSync(join(opt, 'dist/test')), false, 'tests must not ship');
      assert.equal(existsSync(join(opt, 'node_modules/typescript')), false, 'devDependencies must be pruned');
      assert.equal(existsSync(join(opt, 'node_modules/fast-check')), false, 'devDependencies must be pruned');
      assert.ok(
        existsSync(join(opt, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node')),
        'native module must be kept',
      );
      assert.ok(existsSync(join(opt, 'node_modules/serialport')));
      assert.equal(mode(join(opt, 'bin/qrvend')), 0o755);
      assert.equal(mode(join(opt, 'bin/qrvend-trial')), 0o755, "the unit's ExecStartPre/ExecStopPost");
      assert.equal(
        mode(join(opt, 'bin/qrvend-release')),
        0o755,
        "the unit's ExecStartPre/ExecStopPost (remote updates)",
      );
      for (const s of ['qrvend-logs', 'qrvend-serial-trace', 'qrvend-test-vend']) {
        assert.equal(mode(join(opt, 'scripts', s)), 0o755);
        assert.equal(readlinkSync(join(root, 'usr/bin', s)), `/opt/qrvend/scripts/${s}`);
      }
      assert.equal(readlinkSync(join(root, 'usr/bin/qrvend')), '/opt/qrvend/bin/qrvend');

      // systemd: the unit as shipped, enabled by the wants symlink; user and tmpfiles declarations.
      const unit = join(root, 'usr/lib/systemd/system/qrvend.service');
      assert.equal(readFileSync(unit, 'utf8'), readFileSync(join(REPO, 'systemd/qrvend.service'), 'utf8'));
      assert.equal(mode(unit), 0o644);
      const wants = join(root, 'etc/systemd/system/multi-user.target.wants/qrvend.service');
      assert.ok(lstatSync(wants).isSymbolicLink());
      assert.equal(readlinkSync(wants), '/usr/lib/systemd/system/qrvend.service');
      assert.match(readFileSync(join(root, 'usr/lib/sysusers.d/qrvend.conf'), 'utf8'), /^u\s+qrvend\s/m);
      assert.match(
        readFileSync(join(root, 'usr/lib/tmpfiles.d/qrvend.conf'), 'utf8'),
        /^z\s+\/etc\/qrvend\/secret-token\s+0640\s+root\s+qrvend/m,
      );

      // Config from the template (valid once layered over the defaults), empty private token, state dir.
      const config = join(root, 'etc/qrvend/config.json');
      assert.equal(readFileSync(config, 'utf8'), readFileSync(join(REPO, 'packaging/config.json.template'), 'utf8'));
      assert.equal(loadConfig({ file: config, env: {} }).config.mdb.port, '/dev/serial0');
      const token = join(root, 'etc/qrvend/secret-token');
      assert.equal(mode(token), 0o640);
      assert.equal(statSync(token).size, 0);
      assert.equal(mode(join(root, 'var/lib/qrvend')), 0o750);

      // The installed release runs from its pruned node_modules (commander, zod, serialport, better-sqlite3).
      const env = { ...process.env, QRVEND_HOME: opt, QRVEND_CONFIG: '' };
      const version = execFileSync(join(opt, 'bin/qrvend'), ['--version'], { env, encoding: 'utf8' }).trim();
      assert.equal(version, JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version);
      // The doctor loads serialport and better-sqlite3: it exits 1 here (no board, no token) but must report.
      const doctor = spawnSync(join(opt, 'bin/qrvend'), ['doctor', '--json', '--config', config], {
        env,
        encoding: 'utf8',
        timeout: CHILD_DEADLINE_MS,
      });
      assert.equal(doctor.status, 1, doctor.stderr);
      const report = JSON.parse(doctor.stdout) as { results: { id: string; status: string }[] };
      assert.equal(
        report.results.find((r) => r.id === 'config')?.status,
        'WARN',
        'the template still has CHANGE-ME values',
      );
    } catch (err) {
      rmSync(root, { recursive: true, force: true });
      throw err;
    }

    try {
      // A technician edits the config and writes the token; then the release is installed again.
      const config = join(root, 'etc/qrvend/config.json');
      const token = join(root, 'etc/qrvend/secret-token');
      const edited = JSON.stringify({
        gateway: { baseUrl: 'https://gw.example.net:8443' },
        machine: { uniQr: 'SITE-42' },
      });
      writeFileSync(config, edited);
      writeFileSync(token, 'x'.repeat(64));
      const second = await runInstall(['--root', root]);
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stdout, /kept existing \/etc\/qrvend\/config\.json/);
      assert.equal(readFileSync(config, 'utf8'), edited);
      assert.equal(readFileSync(token, 'utf8'), 'x'.repeat(64));
      assert.equal(mode(token), 0o640);
      assert.equal(
        readlinkSync(join(root, 'etc/systemd/system/multi-user.target.wants/qrvend.service')),
        '/usr/lib/systemd/system/qrvend.service',
      );
      // No staging or old copies left behind.
      assert.deepEqual(readdirSync(join(root, 'opt')), ['qrvend']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
);

test(
  'install.sh --no-enable leaves the unit disabled; a bad option is a usage error',
  { timeout: TEST_DEADLINE_MS + 2 * CHILD_DEADLINE_MS },
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'qrvend-install-noenable-'));
    try {
      const run = await runInstall(['--root', root, '--no-enable']);
      assert.equal(run.code, 0, run.stderr);
      assert.ok(existsSync(join(root, 'usr/lib/systemd/system/qrvend.service')));
      assert.equal(existsSync(join(root, 'etc/systemd/system/multi-user.target.wants/qrvend.service')), false);
      const bad = await runInstall(['--root', root, '--frobnicate']);
      assert.equal(bad.code, 64);
      assert.match(bad.stderr, /unknown option '--frobnicate'/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
);

test(
  'the sysusers.d declaration creates the qrvend user in the dialout, gpio and video groups',
  { timeout: TEST_DEADLINE_MS + CHILD_DEADLINE_MS },
  async (t) => {
    if (!hasCommand('systemd-sysusers')) {
      t.skip('systemd-sysusers is not installed');
      return;
    }
    const root = mkdtempSync(join(tmpdir(), 'qrvend-sysusers-'));
    try {
      // As at an image's first boot: the declaration in the root's sysusers.d, applied to that root.
      const install = await runInstall(['--root', root, '--no-enable']);
      assert.equal(install.code, 0, install.stderr);
      execFileSync('systemd-sysusers', [`--root=${root}`], { stdio: 'ignore' });
      const passwd = readFileSync(join(root, 'etc/passwd'), 'utf8');
      const group = readFileSync(join(root, 'etc/group'), 'utf8');
      assert.match(passwd, /^qrvend:x:\d+:\d+:[^:]*:\/var\/lib\/qrvend:/m);
      for (const g of ['dialout', 'gpio', 'video'])
        assert.match(group, new RegExp(`^${g}:x:\\d+:(.*,)?qrvend(,|$)`, 'm'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
);
