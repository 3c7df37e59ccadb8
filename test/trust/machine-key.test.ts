/**
 * The machine's own key (src/trust/machine-key.ts): refused unless a regular file, mode 0600 (or
 * stricter), owned by the agent's user; its id derived from its public half, as keygen prints it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateMachineKey, loadMachineKey, machineKeyId } from '../../src/trust/machine-key.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

test('a 0600 key owned by the agent loads, with the id and public half keygen printed', T, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-machine-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const made = generateMachineKey();
  const file = join(dir, 'machine-key.pem');
  writeFileSync(file, made.privatePem, { mode: 0o600 });
  const loaded = loadMachineKey(file);
  assert.equal(loaded.keyId, made.entry.id);
  assert.equal(loaded.publicKey, made.entry.publicKey);
  assert.equal(machineKeyId(made.entry.publicKey), made.entry.id);
  assert.match(made.entry.id, /^m-[A-Za-z0-9_-]{16}$/);
  chmodSync(file, 0o400);
  assert.equal(loadMachineKey(file).keyId, made.entry.id);
});

test('looser than 0600, another owner, a symlink, not a key: refused naming why, never the content', T, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-machine-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const made = generateMachineKey();
  const file = join(dir, 'machine-key.pem');
  writeFileSync(file, made.privatePem, { mode: 0o600 });
  for (const mode of [0o640, 0o604, 0o660]) {
    chmodSync(file, mode);
    assert.throws(
      () => loadMachineKey(file),
      (err: Error) => /group or others may use it; chmod 0600/.test(err.message) && !err.message.includes('PRIVATE'),
    );
  }
  chmodSync(file, 0o600);
  const euid = process.geteuid!();
  assert.throws(
    () => loadMachineKey(file, euid + 1),
    new RegExp(`owned by uid ${euid}, not by the agent's user \\(uid ${euid + 1}\\)`),
  );
  const link = join(dir, 'link.pem');
  symlinkSync(file, link);
  assert.throws(() => loadMachineKey(link), /is a symbolic link/);
  const notKey = join(dir, 'not-key.pem');
  writeFileSync(notKey, 'hello', { mode: 0o600 });
  assert.throws(() => loadMachineKey(notKey), /is not a PEM private key/);
  assert.throws(() => loadMachineKey(join(dir, 'missing.pem')), /cannot be read \(ENOENT\)/);
});

test("the key's directory: one group or others may write, or owned by a third user, is refused naming it", T, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-machine-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const made = generateMachineKey();
  const file = join(dir, 'machine-key.pem');
  writeFileSync(file, made.privatePem, { mode: 0o600 });
  // Sticky or not: whoever may write the directory may swap the key by a rename there.
  for (const mode of [0o777, 0o1777, 0o770]) {
    chmodSync(dir, mode);
    assert.throws(
      () => loadMachineKey(file),
      (err: Error) =>
        err.message.includes(`inside ${dir} (mode 0${mode.toString(8)}), which group or others may write`) &&
        !err.message.includes('PRIVATE'),
    );
  }
  chmodSync(dir, 0o700);
  assert.equal(loadMachineKey(file).keyId, made.entry.id);
  if (process.geteuid?.() === 0) {
    // A directory of a third user (root may give it away; the agent runs as root here, the file stays its own).
    chownSync(dir, 4242, 4242);
    assert.throws(() => loadMachineKey(file), /owned by uid 4242, not by root or the agent's user \(uid 0\)/);
  }
});
