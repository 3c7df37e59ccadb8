/**
 * The fail-io shim's counting mode (QRVEND_FAILIO_TALLY), preloaded into a real child process, and
 * the parser the SD-card wear benchmark reads it with.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { FAIL_IO_SHIM, parseTally } from '../../bench/support/io-tally.js';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

test('parseTally counts syncs and bytes per file and skips torn lines', T, () => {
  const t = parseTally(
    'W 100 /x/ledger.sqlite-wal\nW 24 /x/ledger.sqlite-wal\nS 0 /x/ledger.sqlite-wal\nW ' +
      '4096 /x/ledger.sqlite\nS 0 /x/ledger.sqlite\nW 12\n\ngarbage\n',
  );
  assert.deepEqual(t, {
    syncs: 2,
    writes: 3,
    bytesByFile: { 'ledger.sqlite-wal': 124, 'ledger.sqlite': 4096 },
    syncsByFile: { 'ledger.sqlite-wal': 1, 'ledger.sqlite': 1 },
  });
});

test(
  'the shim tallies the write and sync calls on files in scope only, and fails nothing without a control file',
  T,
  () => {
    assert.ok(existsSync(FAIL_IO_SHIM), `${FAIL_IO_SHIM} is built by native/build.mjs (npm ci, npm test)`);
    const dir = mkdtempSync(join(os.tmpdir(), 'qrvend-tally-'));
    try {
      const scope = join(dir, 'scope');
      const tallyFile = join(dir, 'tally');
      const script = `
      const fs = require('node:fs');
      fs.mkdirSync(${JSON.stringify(scope)});
      const fd = fs.openSync(${JSON.stringify(join(scope, 'a.db'))}, 'w');
      fs.writeSync(fd, Buffer.alloc(1000));
      fs.writeSync(fd, Buffer.alloc(24), 0, 24, 4096);
      fs.fsyncSync(fd);
      fs.fdatasyncSync(fd);
      fs.closeSync(fd);
      const out = fs.openSync(${JSON.stringify(join(dir, 'outside'))}, 'w');
      fs.writeSync(out, 'not counted');
      fs.fsyncSync(out);
      fs.closeSync(out);`;
      const r = spawnSync(process.execPath, ['-e', script], {
        env: { ...process.env, LD_PRELOAD: FAIL_IO_SHIM, QRVEND_FAILIO_DIR: scope, QRVEND_FAILIO_TALLY: tallyFile },
        encoding: 'utf8',
        timeout: CHILD_DEADLINE_MS,
      });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(parseTally(readFileSync(tallyFile, 'utf8')), {
        syncs: 2,
        writes: 2,
        bytesByFile: { 'a.db': 1024 },
        syncsByFile: { 'a.db': 2 },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
