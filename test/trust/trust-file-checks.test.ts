/**
 * Who may have written the trust file (src/trust/trust-file-checks.ts, docs/security.md "The trust
 * file"): each refusal at load, on real files, naming why; and one public key under two ids.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSigningKey, loadKeyring } from '../../src/trust/keys.js';
import { allowedOwners } from '../../src/trust/trust-file-checks.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
/** A uid that is neither root nor the test's own user (nobody, on Debian). */
const STRANGER = 65534;
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

function scratch(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-trustfile-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A valid trust file (mode 0644) in `dir`. */
function trustFile(dir: string, name = 'fleet-trust.json'): string {
  const file = join(dir, name);
  const keys = [{ id: 'ops', publicKey: generateSigningKey().publicKey, scopes: ['read'] }];
  writeFileSync(file, JSON.stringify({ keys }));
  chmodSync(file, 0o644);
  return file;
}

test('the owners allowed are root and the user the agent runs as', T, () => {
  assert.deepEqual([...allowedOwners()].sort(), [...new Set([0, process.getuid!()])].sort());
});

test('a symbolic link to a good 0644 trust file is refused: the file itself must be named', T, (t) => {
  const dir = scratch(t);
  const file = trustFile(dir);
  assert.equal(loadKeyring(file).byId.size, 1);
  const link = join(dir, 'link.json');
  symlinkSync(file, link);
  assert.throws(() => loadKeyring(link), /link\.json is a symbolic link: set fleet\.trustFile to the file itself/);
});

test("a trust file owned by another user than root or the agent's is refused", T, (t) => {
  if (!isRoot) {
    t.skip('only root can give a file to another user');
    return;
  }
  const dir = scratch(t);
  const file = trustFile(dir);
  chownSync(file, STRANGER, STRANGER);
  assert.throws(() => loadKeyring(file), new RegExp(`owned by uid ${STRANGER}, not by root.*chown root`));
});

test('a trust file inside a directory group or others may write is refused, also with the sticky bit', T, (t) => {
  const dir = scratch(t);
  const open = join(dir, 'open');
  mkdirSync(open);
  const file = trustFile(open);
  for (const mode of [0o777, 0o1777, 0o775]) {
    chmodSync(open, mode);
    assert.throws(() => loadKeyring(file), /inside .*open, which group or others may write/, mode.toString(8));
  }
  chmodSync(open, 0o755);
  assert.equal(loadKeyring(file).byId.size, 1);
});

test('a trust file inside a directory owned by another user is refused', T, (t) => {
  if (!isRoot) {
    t.skip('only root can give a directory to another user');
    return;
  }
  const dir = scratch(t);
  const theirs = join(dir, 'theirs');
  mkdirSync(theirs, { mode: 0o755 });
  const file = trustFile(theirs);
  chownSync(theirs, STRANGER, STRANGER);
  assert.throws(() => loadKeyring(file), new RegExp(`inside .*theirs, owned by uid ${STRANGER}`));
});

test('one public key under two ids is refused, naming both ids', T, (t) => {
  const dir = scratch(t);
  const file = join(dir, 'fleet-trust.json');
  const { publicKey } = generateSigningKey();
  const keys = [
    { id: 'ops-a', publicKey, scopes: ['read'] },
    { id: 'ops-b', publicKey, scopes: ['operate'] }, // the same key again, under another id
  ];
  writeFileSync(file, JSON.stringify({ keys }), { mode: 0o644 });
  assert.throws(() => loadKeyring(file), /one public key is listed twice, as ops-a and ops-b/);
});
