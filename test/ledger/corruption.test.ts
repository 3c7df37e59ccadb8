import { test } from 'node:test';
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { closeSync, existsSync, openSync, readFileSync, readdirSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/core/log.js';
import { isQrvendError } from '../../src/core/errors.js';
import { inspectLedger, SCHEMA_VERSION } from '../../src/ledger/index.js';
import { ManualClock, openStaticSession, openTest, settlementBody, tempLedgerPath } from './helpers.js';

function capture() {
  const chunks: string[] = [];
  const destination = new Writable({ write: (c, _e, cb) => (chunks.push(String(c)), cb()) });
  return {
    logger: createLogger({ level: 'info', destination }),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** Deterministic garbage (a fixed LCG), so a failure can be reproduced byte for byte. */
function garbage(bytes: number, seed = 12345): Buffer {
  const out = Buffer.alloc(bytes);
  let x = seed;
  for (let i = 0; i < bytes; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out[i] = x >> 16;
  }
  return out;
}

test('a file of garbage is moved aside, kept byte for byte, replaced, with an alarm; the ledger works', () => {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  const { logger, lines } = capture();
  try {
    const junk = garbage(16384);
    writeFileSync(tmp.path, junk);
    const ledger = openTest(tmp.path, clock, { logger });
    const alarm = ledger.corruptionAlarm;
    assert.ok(alarm !== null, 'the alarm is raised');
    assert.match(alarm.reason, /SQLITE_NOTADB|SQLITE_CORRUPT/);
    assert.equal(alarm.movedTo, `${tmp.path}.corrupt-2025-01-15T12-00-00-000Z`);
    assert.deepEqual(readFileSync(alarm.movedTo), junk, 'the damaged file is kept as found');
    const logged = lines().find((l) => l.code === 'LEDGER_CORRUPT');
    assert.equal(logged?.level, 'error');
    assert.equal(logged?.movedTo, alarm.movedTo);
    // The service keeps running on a fresh ledger.
    assert.equal(ledger.acceptStart({ txId: 'TX-AFTER-CORRUPTION', appUserId: 'u', balance: null }).created, true);
    assert.equal(ledger.writable, true);
    ledger.close();
    // The next start finds a healthy file: no new alarm.
    const again = openTest(tmp.path, clock);
    assert.equal(again.corruptionAlarm, null);
    assert.equal(again.getTransaction('TX-AFTER-CORRUPTION')?.state, 'start_accepted');
    again.close();
  } finally {
    tmp.cleanup();
  }
});

test('a real ledger with damaged pages is detected by the integrity check and moved aside with its companions', () => {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  try {
    const ledger = openTest(tmp.path, clock);
    // Long AppUserIds make few rows span many pages (few commits keep the test quick).
    for (let i = 0; i < 40; i++)
      ledger.acceptStart({ txId: `TX-PAGE-${i}`, appUserId: 'u'.repeat(2000), balance: null });
    ledger.close();
    const size = readFileSync(tmp.path).length;
    assert.ok(size > 8 * 4096, `the ledger spans many pages (${size} bytes)`);
    // Overwrite pages in the middle of the file (not the header), as a failing SD card might.
    const fd = openSync(tmp.path, 'r+');
    writeSync(fd, garbage(3 * 4096, 99), 0, 3 * 4096, 4 * 4096);
    closeSync(fd);
    writeFileSync(`${tmp.path}-wal`, Buffer.alloc(0)); // a leftover companion, moved along
    const reopened = openTest(tmp.path, clock);
    assert.ok(reopened.corruptionAlarm !== null);
    assert.ok(existsSync(reopened.corruptionAlarm.movedTo));
    assert.ok(existsSync(`${reopened.corruptionAlarm.movedTo}-wal`));
    assert.equal(reopened.getTransaction('TX-PAGE-1'), null, 'a fresh, empty ledger replaced it');
    assert.deepEqual(
      readdirSync(tmp.dir)
        .filter((f) => f.includes('.corrupt-'))
        .sort(),
      // The -shm was created by the connection that found the damage; it travels with the others.
      [
        'ledger.sqlite.corrupt-2025-01-15T12-00-00-000Z',
        'ledger.sqlite.corrupt-2025-01-15T12-00-00-000Z-shm',
        'ledger.sqlite.corrupt-2025-01-15T12-00-00-000Z-wal',
      ],
    );
    reopened.close();
  } finally {
    tmp.cleanup();
  }
});

test('inspectLedger reads counts read-only, never creates a file, and reports damage without touching it', () => {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  try {
    assert.throws(
      () => inspectLedger(tmp.path),
      (e) => isQrvendError(e, 'LEDGER_NOT_FOUND'),
    );
    assert.equal(existsSync(tmp.path), false, 'inspecting a missing ledger does not create it');

    const ledger = openTest(tmp.path, clock);
    openStaticSession(ledger, 'TX-I1');
    ledger.recordVendApproved('TX-I1', { seq: 1, item: 1, price: 1 });
    ledger.recordVendResult('TX-I1', 1, 'success');
    ledger.settleSession('TX-I1', settlementBody('TX-I1', 1, 1));
    clock.advance(1000);
    openStaticSession(ledger, 'TX-I2');
    ledger.recordVendApproved('TX-I2', { seq: 1, item: 1, price: 2 });
    ledger.recordVendResult('TX-I2', 1, 'success');
    const second = ledger.settleSession('TX-I2', settlementBody('TX-I2', 2, 1)).outboxId!;
    ledger.outbox.deadLetter(ledger.outbox.get(second)!, clock.ms, 'declined 8', 8);
    // Inspect while the daemon's connection is still open.
    const seen = inspectLedger(tmp.path);
    assert.deepEqual(seen, {
      integrity: 'ok',
      schemaVersion: SCHEMA_VERSION,
      pending: 1,
      dead: 1,
      oldestPendingAt: '2025-01-15T12:00:00.000Z',
    });
    ledger.close();

    const junk = garbage(8192, 7);
    const bad = join(tmp.dir, 'bad.sqlite');
    writeFileSync(bad, junk);
    const verdict = inspectLedger(bad);
    assert.notEqual(verdict.integrity, 'ok');
    assert.match(verdict.integrity, /not a database|SQLITE_NOTADB/);
    assert.equal(verdict.schemaVersion, 0);
    assert.deepEqual(readFileSync(bad), junk, 'inspection never repairs or moves a file');
  } finally {
    tmp.cleanup();
  }
});

test('a ledger written by a newer qrvend is refused, not moved aside', () => {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  try {
    openTest(tmp.path, clock).close();
    // Bump the version with a plain connection, as a future release would with a step that is not
    // additive (one that is, this build opens: test/ledger/schema-compat.test.ts).
    const db = new Database(tmp.path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.prepare("UPDATE meta SET value = ? WHERE key = 'schema.compatibleFrom'").run(String(SCHEMA_VERSION + 1));
    db.close();
    assert.throws(
      () => openTest(tmp.path, clock),
      (e) => isQrvendError(e, 'LEDGER_SCHEMA_UNSUPPORTED'),
    );
    assert.equal(
      readdirSync(tmp.dir).some((f) => f.includes('.corrupt-')),
      false,
    );
  } finally {
    tmp.cleanup();
  }
});
