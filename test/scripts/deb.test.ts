/**
 * The .deb's maintainer scripts (packaging/debian) run as dpkg runs them, against a temporary
 * root through DPKG_ROOT (as `dpkg --root` does): first install, a provisioned upgrade, remove,
 * reinstall, purge. The package itself is built by `npm run release` (too heavy for npm test);
 * its contents are checked by release/check.ts, whose rules have their own unit tests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from './helpers.js';
import { debPackage, type Package } from './deb-support.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const WANTS = 'etc/systemd/system/multi-user.target.wants/qrvend.service';

/** What dpkg has unpacked before postinst runs: the release tree, the stable scripts, the conffile. */
function unpacked(root: string): Package {
  const pkg = debPackage(root, '0.1.0');
  pkg.unpack();
  return pkg;
}

test(
  'maintainer scripts: install enables and creates the token; upgrade keeps ' +
    "config, token and the admin's disable; remove keeps state; purge removes it",
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'qrvend-deb-'));
    try {
      const pkg = unpacked(root);
      const script = (name: 'postinst' | 'prerm' | 'postrm', ...args: string[]) => pkg.script(name, ...args);

      // First install: unit enabled, an empty private token, state dir, a hint for the technician.
      const install = await script('postinst', 'configure');
      assert.equal(install.code, 0, install.stderr);
      assert.equal(readlinkSync(join(root, WANTS)), '/usr/lib/systemd/system/qrvend.service');
      const token = join(root, 'etc/qrvend/secret-token');
      assert.equal(statSync(token).size, 0);
      assert.equal(statSync(token).mode & 0o777, 0o640);
      assert.equal(statSync(join(root, 'var/lib/qrvend')).mode & 0o777, 0o750);
      assert.match(install.stdout, /write the SecretToken into/);

      // Provisioned by the technician; the admin disables the unit; an upgrade changes none of it.
      const config = join(root, 'etc/qrvend/config.json');
      writeFileSync(config, '{"machine":{"uniQr":"SITE-7"}}');
      writeFileSync(token, 't'.repeat(64));
      writeFileSync(join(root, 'var/lib/qrvend/ledger.sqlite'), 'ledger');
      rmSync(join(root, WANTS));
      const upgrade = await script('postinst', 'configure', '0.0.9');
      assert.equal(upgrade.code, 0, upgrade.stderr);
      assert.equal(readFileSync(config, 'utf8'), '{"machine":{"uniQr":"SITE-7"}}');
      assert.equal(readFileSync(token, 'utf8'), 't'.repeat(64));
      assert.equal(existsSync(join(root, WANTS)), false, 'an upgrade must not re-enable a unit the admin disabled');
      assert.doesNotMatch(upgrade.stdout, /CHANGE-ME/, 'a provisioned machine gets no provisioning hint');

      // Enabled again, then removed: disabled, state kept; a reinstall enables it again.
      await script('postinst', 'configure');
      assert.ok(lstatSync(join(root, WANTS)).isSymbolicLink());
      assert.equal((await script('prerm', 'remove')).code, 0);
      assert.equal((await script('postrm', 'remove')).code, 0);
      assert.equal(existsSync(join(root, WANTS)), false);
      assert.equal(readFileSync(config, 'utf8'), '{"machine":{"uniQr":"SITE-7"}}');
      assert.equal(readFileSync(token, 'utf8'), 't'.repeat(64));
      assert.equal(readFileSync(join(root, 'var/lib/qrvend/ledger.sqlite'), 'utf8'), 'ledger');
      const reinstall = await script('postinst', 'configure', '0.1.0');
      assert.equal(reinstall.code, 0, reinstall.stderr);
      assert.ok(lstatSync(join(root, WANTS)).isSymbolicLink(), 'a reinstall after remove enables the unit again');
      assert.equal(existsSync(join(root, 'var/lib/qrvend/.enable-on-reinstall')), false);

      // Purge: configuration, token and ledger gone, unit disabled.
      await script('postrm', 'remove');
      const purge = await script('postrm', 'purge');
      assert.equal(purge.code, 0, purge.stderr);
      assert.equal(existsSync(join(root, 'etc/qrvend')), false);
      assert.equal(existsSync(join(root, 'var/lib/qrvend')), false);
      assert.equal(existsSync(join(root, WANTS)), false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
);

test(
  'postinst brings back a config.json deleted by hand (dpkg does not restore a deleted conffile)',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'qrvend-deb-conf-'));
    try {
      const pkg = unpacked(root);
      rmSync(join(root, 'etc/qrvend/config.json'));
      const run = await pkg.script('postinst', 'configure', '0.1.0');
      assert.equal(run.code, 0, run.stderr);
      assert.equal(
        readFileSync(join(root, 'etc/qrvend/config.json'), 'utf8'),
        readFileSync(join(REPO, 'packaging/config.json.template'), 'utf8'),
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
);
