/**
 * The durable writes (src/core/durable-file.ts): whole files replaced in one step, nothing left
 * beside them. That each step is fsynced is shown by the field test's power cuts
 * (docs/field-test.md); here, what a caller sees.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic, writeFileAtomicAsync } from '../../src/core/durable-file.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

for (const [name, write] of [
  ['writeFileAtomic', async (p: string, t: string, m?: number) => writeFileAtomic(p, t, m)],
  ['writeFileAtomicAsync', writeFileAtomicAsync],
] as const) {
  test(`${name} replaces the whole file with the given mode and leaves no temporary file`, T, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-durable-'));
    try {
      const path = join(dir, 'facts.json');
      writeFileSync(path, 'old content that is longer than the new one\n');
      await write(path, '{"a":1}\n', 0o644);
      assert.equal(readFileSync(path, 'utf8'), '{"a":1}\n');
      assert.equal(statSync(path).mode & 0o777, 0o644);
      assert.deepEqual(readdirSync(dir), ['facts.json']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`${name} into a missing directory fails and creates nothing`, T, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-durable-'));
    try {
      await assert.rejects(write(join(dir, 'missing', 'facts.json'), 'x'), /ENOENT/);
      assert.deepEqual(readdirSync(dir), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
