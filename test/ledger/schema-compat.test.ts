/**
 * Ledger migrations and a release's rollback (docs/decisions/remote-updates-rollout.md item 5, docs/releases.md "Ledger
 * migrations"): a newer release that migrated the ledger with additive steps leaves a file this
 * build opens as it is, with the sales the newer one recorded during its trial, and keeps
 * recording and delivering in it; a file a step made unusable for this build is refused with
 * LEDGER_SCHEMA_UNSUPPORTED, never migrated down and never moved aside. Real SQLite files; the
 * "newer release" is this build's file with an additive step applied by hand.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { isQrvendError } from '../../src/core/errors.js';
import { SCHEMA_VERSION } from '../../src/ledger/index.js';
import { COMPATIBLE_FROM, COMPATIBLE_FROM_KEY, MIGRATION_STEPS, additiveProblems } from '../../src/ledger/schema.js';
import { readOutbox } from '../../src/ledger/admin.js';
import { ManualClock, openTest, settlementBody, tempLedgerPath } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

/** A static sale from Start to its Settlement in the outbox, as the flows record one. */
function recordSale(ledger: ReturnType<typeof openTest>, txId: string): void {
  ledger.acceptStart({ txId, appUserId: 'u', balance: null });
  ledger.markAuthorizing(txId, 5);
  ledger.markAuthorized(txId, { AuthCode: 'A1', AuthAmount: 5, SrvTranId: `S-${txId}` }, 5);
  ledger.openSession(txId);
  ledger.recordVendApproved(txId, { seq: 1, item: 12, price: 1.5 });
  ledger.recordVendResult(txId, 1, 'success');
  assert.equal(ledger.settleSession(txId, settlementBody(txId, 1.5, 1)).record.state, 'settling');
}

/** What a newer release does to the file: one more step, additive, and the bound it declares. */
function migrateLikeANewerRelease(path: string, compatibleFrom: number | null): void {
  const db = new Database(path);
  try {
    db.exec(
      'CREATE TABLE audit_readings (id INTEGER PRIMARY KEY, at_ms INTEGER NOT ' +
        'NULL) STRICT; ALTER TABLE transactions ADD COLUMN audit_ref TEXT;',
    );
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    if (compatibleFrom === null) db.prepare('DELETE FROM meta WHERE key = ?').run(COMPATIBLE_FROM_KEY);
    else db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(String(compatibleFrom), COMPATIBLE_FROM_KEY);
  } finally {
    db.close();
  }
}

function metaValue(path: string): { version: number; compatibleFrom: string | undefined } {
  const db = new Database(path, { readonly: true });
  try {
    const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(COMPATIBLE_FROM_KEY) as
      { value: string } | undefined;
    return { version: db.pragma('user_version', { simple: true }) as number, compatibleFrom: row?.value };
  } finally {
    db.close();
  }
}

test(
  "the rule holds for this build's steps: every step after the first " +
    'ones is additive, and the file says which schema can use it',
  T,
  () => {
    for (const step of MIGRATION_STEPS.filter((s) => s.additive))
      assert.deepEqual(additiveProblems(step.sql), [], `step ${step.version} is marked additive`);
    // The checker itself: what an additive step may not do.
    assert.deepEqual(
      additiveProblems(
        'CREATE TABLE x (a INTEGER); ALTER TABLE transactions ADD COLUMN b ' +
          'TEXT; ALTER TABLE t ADD COLUMN c INTEGER NOT NULL DEFAULT 0;',
      ),
      [],
    );
    assert.equal(additiveProblems('DROP TABLE vends;').length, 1);
    assert.equal(additiveProblems('ALTER TABLE outbox_v9 RENAME TO outbox;').length, 1);
    assert.equal(additiveProblems('ALTER TABLE transactions ADD COLUMN c INTEGER NOT NULL;').length, 1);
    assert.ok(COMPATIBLE_FROM <= SCHEMA_VERSION);

    const tmp = tempLedgerPath();
    try {
      openTest(tmp.path, new ManualClock()).close();
      assert.deepEqual(metaValue(tmp.path), { version: SCHEMA_VERSION, compatibleFrom: String(COMPATIBLE_FROM) });
      // A file of this schema written before the rule gets its bound at the next open.
      const db = new Database(tmp.path);
      db.prepare('DELETE FROM meta WHERE key = ?').run(COMPATIBLE_FROM_KEY);
      db.close();
      openTest(tmp.path, new ManualClock()).close();
      assert.deepEqual(metaValue(tmp.path), { version: SCHEMA_VERSION, compatibleFrom: String(COMPATIBLE_FROM) });
    } finally {
      tmp.cleanup();
    }
  },
);

test(
  'rolled back after an additive migration: this build opens the newer file as it ' +
    "is, keeps the trial's sales to deliver, records more, migrates nothing down",
  T,
  () => {
    const tmp = tempLedgerPath();
    const clock = new ManualClock();
    try {
      // Before the update: this build's sale, delivered or not.
      let ledger = openTest(tmp.path, clock);
      recordSale(ledger, 'TX-BEFORE-UPDATE');
      ledger.close();
      // The newer release migrates and, on trial, records a sale of its own; then it is rolled back.
      migrateLikeANewerRelease(tmp.path, SCHEMA_VERSION);
      ledger = openTest(tmp.path, clock);
      recordSale(ledger, 'TX-DURING-TRIAL');
      ledger.close();

      // The previous release (this build) starts on it.
      ledger = openTest(tmp.path, clock);
      try {
        assert.equal(
          ledger.getTransaction('TX-DURING-TRIAL')?.state,
          'settling',
          "the trial's sale is there, its Settlement still to deliver",
        );
        assert.equal(ledger.getTransaction('TX-BEFORE-UPDATE')?.state, 'settling');
        assert.equal(ledger.outbox.counts().pending, 2);
        recordSale(ledger, 'TX-AFTER-ROLLBACK');
        assert.equal(ledger.outbox.counts().pending, 3);
      } finally {
        ledger.close();
      }
      // The technician's outbox view of this build reads it too.
      assert.equal(readOutbox(tmp.path, { status: 'pending', limit: 10 }).rows.length, 3);
      assert.deepEqual(
        metaValue(tmp.path),
        { version: SCHEMA_VERSION + 1, compatibleFrom: String(SCHEMA_VERSION) },
        'the newer release finds its own file again',
      );
      const db = new Database(tmp.path, { readonly: true });
      try {
        assert.equal(
          (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'audit_readings'").get() as { n: number })
            .n,
          1,
        );
      } finally {
        db.close();
      }
    } finally {
      tmp.cleanup();
    }
  },
);

test('a newer file this build cannot use is refused, naming both versions, and left as it is', T, () => {
  for (const [compatibleFrom, says] of [
    [SCHEMA_VERSION + 1, `needs code of schema ${SCHEMA_VERSION + 1} or later`],
    [null, 'does not say which older versions can use it'],
  ] as const) {
    const tmp = tempLedgerPath();
    try {
      const ledger = openTest(tmp.path, new ManualClock());
      recordSale(ledger, 'TX-KEPT');
      ledger.close();
      migrateLikeANewerRelease(tmp.path, compatibleFrom);
      assert.throws(
        () => openTest(tmp.path, new ManualClock()),
        (err: unknown) =>
          isQrvendError(err) &&
          err.code === 'LEDGER_SCHEMA_UNSUPPORTED' &&
          err.message.includes(
            `schema version ${SCHEMA_VERSION + 1}, newer than this qrvend understands (${SCHEMA_VERSION})`,
          ) &&
          err.message.includes(says) &&
          /never move the file aside/.test(err.describe()),
      );
      assert.throws(() => readOutbox(tmp.path, { limit: 10 }), /LEDGER_SCHEMA_UNSUPPORTED|schema version/);
      assert.equal(metaValue(tmp.path).version, SCHEMA_VERSION + 1, 'never migrated down');
    } finally {
      tmp.cleanup();
    }
  }
});
