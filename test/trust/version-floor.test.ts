/**
 * The highest verified version of a signed document, kept on disk (src/trust/version-floor.ts,
 * docs/security.md "Versions kept across restarts"): recorded durably, an older one refused naming
 * both versions (also by a new process, as after a restart), the operator's step back, and a
 * damaged record refused rather than read as none.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chownSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isQrvendError } from '../../src/core/errors.js';
import { VersionFloor } from '../../src/trust/version-floor.js';

function scratch(t: { after: (fn: () => void) => void }): string {
  const d = mkdtempSync(join(tmpdir(), 'qrvend-floor-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const asDate = (v: number) => `signed at ${new Date(v).toISOString()}`;

test('the first version is recorded; a newer one raises the record; an older one is refused naming both', (t) => {
  const dir = join(scratch(t), 'state');
  const floor = new VersionFloor({ dir, document: 'registry', describe: asDate, stepBackHint: 'qrvend x step-back' });
  assert.equal(floor.read(), null);
  floor.admit(NOW - 2_000);
  floor.admit(NOW);
  assert.equal(floor.read()?.version, NOW);
  assert.equal(statSync(floor.file).mode & 0o777, 0o600);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.throws(
    () => floor.admit(NOW - 2_000),
    (err: unknown) =>
      isQrvendError(err, 'VERSION_ROLLBACK') &&
      err.message.includes(asDate(NOW - 2_000)) &&
      err.message.includes(asDate(NOW)) &&
      (err.hint ?? '').includes('qrvend x step-back'),
  );
  // The same version again (the file re-read) is taken, and the record never goes down by itself.
  floor.admit(NOW);
  floor.record(NOW - 5_000);
  assert.equal(floor.read()?.version, NOW);
});

test('a new reader of the same directory (a restart) refuses what the last one recorded as older', (t) => {
  const dir = scratch(t);
  new VersionFloor({ dir, document: 'revocations' }).admit(7);
  const again = new VersionFloor({ dir, document: 'revocations' });
  assert.throws(() => again.check(6), /version 6, older than version 7/);
  // another document's record is its own
  new VersionFloor({ dir, document: 'catalog' }).admit(1);
  assert.equal(again.read()?.version, 7);
});

test('another content under the recorded version is refused when both digests are known', (t) => {
  const floor = new VersionFloor({ dir: scratch(t), document: 'catalog' });
  floor.admit(3, 'aaa');
  floor.admit(3, 'aaa');
  assert.throws(
    () => floor.admit(3, 'bbb'),
    (err: unknown) => isQrvendError(err, 'VERSION_ROLLBACK'),
  );
  floor.admit(4, 'bbb');
  assert.equal(floor.read()?.digest, 'bbb');
});

test("the operator's step back lowers the record on purpose and keeps what it was", (t) => {
  const floor = new VersionFloor({ dir: scratch(t), document: 'registry' });
  floor.admit(300);
  assert.deepEqual(floor.stepBack(100, undefined, NOW), { from: 300, to: 100 });
  const record = floor.read();
  assert.equal(record?.version, 100);
  assert.equal(record?.steppedBackFrom, 300);
  assert.equal(record?.recordedAt, new Date(NOW).toISOString());
  floor.check(100);
  assert.throws(() => floor.check(99), /older/);
});

test('a damaged or foreign record refuses everything (fail closed) until a step back writes a good one', (t) => {
  const floor = new VersionFloor({ dir: scratch(t), document: 'registry' });
  for (const text of ['{"format":1,"docu', '{"format":1,"document":"catalog","version":5}', '{"format":1}', 'null']) {
    writeFileSync(floor.file, text);
    assert.throws(
      () => floor.check(10),
      (err: unknown) => isQrvendError(err, 'VERSION_FLOOR_FAILED') && err.message.includes(floor.file),
      text,
    );
  }
  assert.deepEqual(floor.stepBack(10), { from: null, to: 10 });
  floor.check(10);
  assert.equal(JSON.parse(readFileSync(floor.file, 'utf8')).version, 10);
});

test('a record that cannot be written is an error, not a silent pass', (t) => {
  // Where the directory should be there is a file (as root, modes would not stop the write).
  const dir = join(scratch(t), 'not-a-directory');
  writeFileSync(dir, 'x');
  const floor = new VersionFloor({ dir, document: 'registry' });
  assert.throws(
    () => floor.admit(1),
    (err: unknown) => isQrvendError(err, 'VERSION_FLOOR_FAILED'),
  );
});

test('names and versions are checked: no path in a name, whole non-negative numbers only', (t) => {
  const dir = scratch(t);
  assert.throws(() => new VersionFloor({ dir, document: '../etc' }), TypeError);
  assert.throws(() => new VersionFloor({ dir, document: 'Registry' }), TypeError);
  const floor = new VersionFloor({ dir, document: 'registry' });
  assert.throws(() => floor.check(1.5), TypeError);
  assert.throws(() => floor.record(-1), TypeError);
});

test(
  "written by root, the record stays its directory owner's (the service must read it after a step back)",
  { skip: process.getuid?.() === 0 ? false : 'only root can give a file away' },
  (t) => {
    const dir = scratch(t);
    chownSync(dir, 4242, 4243);
    const floor = new VersionFloor({ dir, document: 'registry' });
    floor.stepBack(5);
    assert.equal(statSync(floor.file).uid, 4242);
    assert.equal(statSync(floor.file).gid, 4243);
  },
);
