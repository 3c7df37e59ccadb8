/**
 * scripts/build-deb.sh: a real package built with dpkg-deb, its metadata and contents, and its
 * postinst/postrm run against a temporary root through DPKG_ROOT (as `dpkg --root` does).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, runScript } from './helpers.js';

function hasDpkgDeb(): boolean {
  try {
    execFileSync('dpkg-deb', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test('build-deb.sh makes a package whose maintainer scripts create config once and keep the ledger on purge', { timeout: 300_000 }, async (t) => {
  if (!hasDpkgDeb()) {
    t.skip('dpkg-deb is not installed');
    return;
  }
  const out = mkdtempSync(join(tmpdir(), 'qrvend-deb-'));
  try {
    const build = await runScript(join(REPO, 'scripts/build-deb.sh'), ['--out', out, '--compress', 'gzip'], { timeoutMs: 280_000 });
    assert.equal(build.code, 0, build.stderr);
    const deb = build.stdout.trim();
    assert.ok(existsSync(deb), `no package at ${deb}`);

    const field = (name: string) => execFileSync('dpkg-deb', ['--field', deb, name], { encoding: 'utf8' }).trim();
    assert.equal(field('Package'), 'qrvend');
    assert.equal(field('Version'), JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version);
    assert.equal(field('Architecture'), execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim());
    assert.match(field('Depends'), /nodejs \(>= \d+\)/);

    const contents = execFileSync('dpkg-deb', ['--contents', deb], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    assert.match(contents, / \.\/usr\/lib\/systemd\/system\/qrvend\.service$/m);
    assert.match(contents, / \.\/opt\/qrvend\/dist\/src\/cli\/main\.js$/m);
    assert.match(contents, / \.\/opt\/qrvend\/share\/config\.json\.template$/m);
    // Technician-owned files are made by postinst, never shipped (an upgrade must not touch them).
    assert.doesNotMatch(contents, /\.\/etc\/qrvend/);
    assert.doesNotMatch(contents, /node_modules\/typescript\//);
    assert.match(contents, /^-[rwx-]{9} root\/root /m);

    // Unpack as dpkg would into a root, then run the maintainer scripts with DPKG_ROOT.
    const root = join(out, 'root');
    execFileSync('dpkg-deb', ['--extract', deb, root]);
    execFileSync('dpkg-deb', ['--control', deb, join(root, 'DEBIAN')]);
    const env = { DPKG_ROOT: root };
    const postinst = await runScript(join(root, 'DEBIAN/postinst'), ['configure'], { env });
    assert.equal(postinst.code, 0, postinst.stderr);
    const config = join(root, 'etc/qrvend/config.json');
    assert.equal(readFileSync(config, 'utf8'), readFileSync(join(REPO, 'packaging/config.json.template'), 'utf8'));
    assert.equal(statSync(join(root, 'etc/qrvend/secret-token')).mode & 0o777, 0o640);
    assert.equal(readlinkSync(join(root, 'etc/systemd/system/multi-user.target.wants/qrvend.service')), '/usr/lib/systemd/system/qrvend.service');

    // An upgrade's postinst keeps the technician's config.
    writeFileSync(config, '{"machine":{"uniQr":"SITE-7"}}');
    assert.equal((await runScript(join(root, 'DEBIAN/postinst'), ['configure', '0.0.9'], { env })).code, 0);
    assert.equal(readFileSync(config, 'utf8'), '{"machine":{"uniQr":"SITE-7"}}');

    // Purge drops the config and the enablement but keeps the ledger (undelivered settlements).
    writeFileSync(join(root, 'var/lib/qrvend/ledger.sqlite'), 'ledger');
    const purge = await runScript(join(root, 'DEBIAN/postrm'), ['purge'], { env });
    assert.equal(purge.code, 0, purge.stderr);
    assert.equal(existsSync(join(root, 'etc/qrvend')), false);
    assert.equal(existsSync(join(root, 'etc/systemd/system/multi-user.target.wants/qrvend.service')), false);
    assert.ok(existsSync(join(root, 'var/lib/qrvend/ledger.sqlite')));
    assert.match(purge.stdout, /kept \/var\/lib\/qrvend/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
