/**
 * The Start's fsync floor (bench/support/fsync-floor.ts) is the ledger's kind of commit: a file
 * opened with the ledger's own pragmas, each commit fsynced WAL frames, two per pair.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsyncFloor } from '../../bench/support/fsync-floor.js';
import { LEDGER_PAGE_SIZE } from '../../src/ledger/db.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

test('the floor file has the ledger pragmas, and each pair is two commits that append WAL frames', T, () => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-fsync-floor-'));
  const floor = FsyncFloor.open(dir);
  try {
    const ms = [floor.pair(), floor.pair(), floor.pair()];
    assert.ok(
      ms.every((m) => m > 0),
      'each pair takes time',
    );
    // Each commit appends a few frames (a row and an event row, their pages and page 1 when the file grows).
    assert.ok(floor.framesPerCommit >= 1 && floor.framesPerCommit < 20, `frames per commit ${floor.framesPerCommit}`);
    const peek = new Database(join(dir, 'fsync-floor.sqlite'), { readonly: true });
    try {
      assert.equal(peek.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(peek.pragma('page_size', { simple: true }), LEDGER_PAGE_SIZE);
      assert.deepEqual(
        peek.prepare('SELECT count(*) AS n FROM tx WHERE state = 2').get(),
        { n: 3 },
        'both commits of each pair are in',
      );
      assert.deepEqual(peek.prepare('SELECT count(*) AS n FROM ev').get(), { n: 6 });
    } finally {
      peek.close();
    }
  } finally {
    floor.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
