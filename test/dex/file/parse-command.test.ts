/** `qrvend dex parse` as a technician runs it: the real CLI as a child process over the fixtures. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../../support/deadlines.js';

const MAIN = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`../../../../test/fixtures/dex/${name}`, import.meta.url));

function qrvend(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: { ...process.env, QRVEND_CONFIG: '' }, timeout: CHILD_DEADLINE_MS },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('qrvend dex parse', { timeout: TEST_DEADLINE_MS }, () => {
  it('prints the serial, the totals with the implied decimals and the product table', async () => {
    const { code, stdout } = await qrvend(['dex', 'parse', fixture('vmc-a1.dex')]);
    assert.equal(code, 0);
    assert.match(stdout, /^check: ok \(G85 ok, over the file's own CR LF lines\)$/m);
    assert.match(stdout, /serial VM2024001, model SNACK-8/);
    assert.match(
      stdout,
      /^paid vends +1554\.00 EUR in 1032 vends \(lifetime\); 18\.10 EUR in 13 vends since the last reset$/m,
    );
    assert.match(stdout, /^cash +506\.00 EUR in 335 vends/m);
    assert.match(stdout, /^cashless #1 +744\.00 EUR in 497 vends/m);
    assert.match(stdout, /^cashless #2 +304\.00 EUR in 200 vends/m);
    assert.match(stdout, /^12 +WATER50 +1\.50 +380 +570\.00 +CA 120, DA 180, DB 80$/m);
  });

  it('--json gives the check and the parsed audit', async () => {
    const { code, stdout } = await qrvend(['dex', 'parse', '--json', fixture('vmc-a2.dex')]);
    assert.equal(code, 0);
    const out = JSON.parse(stdout);
    assert.equal(out.check.ok, true);
    assert.deepEqual(out.audit.cashless1.sinceInit, { value: 76200, count: 509 });
    assert.equal(out.audit.products.length, 3);
  });

  it('a file that fails its check is printed with the reason and exits 1', async () => {
    const { code, stdout } = await qrvend(['dex', 'parse', fixture('bad-g85.dex')]);
    assert.equal(code, 1);
    assert.match(stdout, /^check: FAILED, figures not to be trusted: G85 says/m);
  });

  it('files as the field writes them: what was skipped, the form G85 was checked over, the SE convention', async () => {
    const header = await qrvend(['dex', 'parse', fixture('capture-header-on-dxs-line.dex')]);
    assert.equal(header.code, 0);
    assert.match(header.stdout, /^check: ok \(G85 ok, over the file's own CR LF lines\)$/m);
    assert.match(header.stdout, /^ {2}warn {2}line 1: "2026-11-25 06:00:12 DEXLOG v3\.2 port=COM3: " \(43 chara/m);
    assert.match(header.stdout, /^machine: serial MKA2024017, model SNACKBOX 6, at DEPOT 3; sender MKA1234567/m);
    const lf = await qrvend(['dex', 'parse', fixture('lf-line-ends.dex')]);
    assert.equal(lf.code, 0);
    assert.match(lf.stdout, /^check: ok \(G85 ok, over the lines with CR LF restored: the file has LF line ends\)$/m);
    const se = await qrvend(['dex', 'parse', fixture('capture-lf-se-from-dxs.dex')]);
    assert.equal(se.code, 0);
    assert.match(se.stdout, /^ {2}warn {2}line 17: SE says 17 segments, the set from line 2 has 16: counted from DXS/m);
    assert.match(se.stdout, /^cashless #1 +300\.00 GBP in 200 vends/m);
  });

  it('a missing file is a usage error naming it', async () => {
    const { code, stderr } = await qrvend(['dex', 'parse', '/nonexistent/audit.dex']);
    assert.equal(code, 64);
    assert.match(stderr, /DEX_FILE_UNREADABLE: cannot open the audit file "\/nonexistent\/audit\.dex": ENOENT/);
  });

  describe("--json prints JSON for every refusal, with a stable code and today's exit codes", () => {
    let dir = '';
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'qrvend-dex-json-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));
    const refusal = (stdout: string) => JSON.parse(stdout) as { ok: boolean; error: { code: string; message: string } };

    it('a missing file: DEX_FILE_UNREADABLE, exit 64', async () => {
      const { code, stdout } = await qrvend(['dex', 'parse', '--json', join(dir, 'none.dex')]);
      assert.equal(code, 64);
      const out = refusal(stdout);
      assert.equal(out.ok, false);
      assert.equal(out.error.code, 'DEX_FILE_UNREADABLE');
      assert.match(out.error.message, /none\.dex": ENOENT/);
    });

    it('a file over the size bound: DEX_TOO_LARGE, exit 64, nothing read', async () => {
      const big = join(dir, 'big.dex');
      writeFileSync(big, '');
      truncateSync(big, 4 * 1024 * 1024 + 1);
      const { code, stdout, stderr } = await qrvend(['dex', 'parse', '--json', big]);
      assert.equal(code, 64);
      assert.equal(refusal(stdout).error.code, 'DEX_TOO_LARGE');
      assert.equal(stderr, '');
    });

    it('a directory: DEX_FILE_UNREADABLE, exit 64', async () => {
      const { code, stdout } = await qrvend(['dex', 'parse', '--json', dir]);
      assert.equal(code, 64);
      assert.equal(refusal(stdout).error.code, 'DEX_FILE_UNREADABLE');
    });

    it('not an audit: the parsed answer with an error object DEX_FILE_UNTRUSTED naming the check, exit 1', async () => {
      const notAudit = join(dir, 'notes.txt');
      writeFileSync(notAudit, 'shopping list\r\n');
      const { code, stdout } = await qrvend(['dex', 'parse', '--json', notAudit]);
      assert.equal(code, 1);
      const out = JSON.parse(stdout);
      assert.equal(out.ok, false);
      assert.deepEqual(out.error, { code: 'DEX_FILE_UNTRUSTED', check: 'no-dxs', message: out.reason });
      assert.equal(out.check.ok, false);
    });

    it('a usage mistake (no file named): CLI_USAGE as JSON, exit 64', async () => {
      const { code, stdout, stderr } = await qrvend(['dex', 'parse', '--json']);
      assert.equal(code, 64);
      assert.equal(refusal(stdout).error.code, 'CLI_USAGE');
      assert.equal(stderr, '');
    });
  });

  it('control characters from the file reach the terminal escaped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-dex-parse-'));
    try {
      const path = join(dir, 'hostile.dex');
      writeFileSync(
        path,
        'DXS*XYZ1234567*VA*V0/6*1\r\nST*001*0001\r\nID1*VM\x1b[2J1\r\nVA1*1*1\r\nSE*4*0001\r\nDXE*1*1\r\n',
      );
      const { stdout } = await qrvend(['dex', 'parse', path]);
      assert.doesNotMatch(stdout, /\x1b/);
      assert.match(stdout, /serial VM\\x1b\[2J1/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
