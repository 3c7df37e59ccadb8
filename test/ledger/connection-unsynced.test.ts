/**
 * writeUnsynced (SD-card wear, docs/decisions/benchmarks.md): one commit at synchronous=NORMAL, the connection back at
 * FULL afterwards, and inside a larger write simply part of that durable commit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { silentLogger } from '../../src/core/log.js';
import { LedgerConnection, realTimers } from '../../src/ledger/connection.js';
import { applyDurabilityPragmas } from '../../src/ledger/db.js';
import { tempLedgerPath } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const FULL = 2;
const NORMAL = 1;

test(
  'writeUnsynced commits at NORMAL and leaves the connection at FULL; nested in a write it keeps FULL',
  { timeout: TEST_DEADLINE_MS },
  () => {
    const tmp = tempLedgerPath();
    const db = new Database(tmp.path);
    applyDurabilityPragmas(db);
    const conn = new LedgerConnection(db, {
      path: tmp.path,
      logger: silentLogger(),
      now: Date.now,
      timers: realTimers,
      probeIntervalMs: 60_000,
    });
    const level = () => db.pragma('synchronous', { simple: true });
    try {
      conn.write(() => db.exec('CREATE TABLE t (v INTEGER)'));
      assert.equal(level(), FULL);
      conn.writeUnsynced(() => {
        assert.equal(level(), NORMAL, 'this one commit is not synced on its own');
        db.prepare('INSERT INTO t VALUES (1)').run();
      });
      assert.equal(level(), FULL, 'the next commit is durable again');
      conn.write(() => {
        conn.writeUnsynced(() => {
          assert.equal(level(), FULL, 'inside a durable write it is part of that commit');
          db.prepare('INSERT INTO t VALUES (2)').run();
        });
      });
      assert.throws(() => conn.writeUnsynced(() => db.exec('INSERT INTO missing VALUES (1)')));
      assert.equal(level(), FULL, 'a failed unsynced write also leaves FULL behind');
      assert.deepEqual(db.prepare('SELECT v FROM t ORDER BY v').all(), [{ v: 1 }, { v: 2 }]);
    } finally {
      conn.close();
      tmp.cleanup();
    }
  },
);
