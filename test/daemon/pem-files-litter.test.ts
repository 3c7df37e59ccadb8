/**
 * No litter (docs/testing.md): test/daemon/pem-files.test.ts, run as `npm test` runs it, leaves
 * nothing in the temp directory, in particular not the self-signed certificate fixture's
 * directory with its private key (made at import, for the whole file).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../support/deadlines.js';

test('pem-files.test leaves no file in the temp directory', { timeout: TEST_DEADLINE_MS }, (t) => {
  const scratch = mkdtempSync(join(tmpdir(), 'qrvend-litter-'));
  try {
    const file = fileURLToPath(new URL('./pem-files.test.js', import.meta.url));
    // Its own run, reporting as a top-level `node --test` does (not to this runner).
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: scratch };
    delete env.NODE_TEST_CONTEXT;
    const run = spawnSync(process.execPath, ['--test', '--test-force-exit', file], {
      env,
      encoding: 'utf8',
      timeout: CHILD_DEADLINE_MS,
    });
    assert.equal(run.status, 0, `pem-files.test failed:\n${run.stdout}\n${run.stderr}`);
    if (!/^# pass 2$/m.test(run.stdout)) return t.skip('pem-files.test skipped its tests (no openssl): nothing made');
    assert.deepEqual(readdirSync(scratch), [], 'left in the temp directory');
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
