/** The remembered protocol: what we wrote comes back; anything else means "not known yet". */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dexFactsPathFor } from '../../../src/dex/link/index.js';
import { readFacts, writeFacts } from '../../../src/dex/link/facts.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

test(
  'facts: written beside the ledger and read back; damaged, foreign, oversized or missing files read as unknown',
  { timeout: TEST_DEADLINE_MS },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-dexfacts-'));
    try {
      const path = dexFactsPathFor(join(dir, 'ledger.sqlite'));
      assert.equal(path, join(dir, 'dex-facts.json'));
      assert.equal(readFacts(path), null);
      writeFacts(path, { protocol: 'ddcmp', port: '/dev/ttyUSB0' });
      assert.deepEqual(readFacts(path), { protocol: 'ddcmp', port: '/dev/ttyUSB0' });
      for (const text of [
        '{"protocol":"ddcm',
        '{"protocol":"kermit","port":"/dev/x"}',
        '[]',
        `{"protocol":"ddcmp","port":"/dev/x","pad":"${'x'.repeat(5000)}"}`,
      ]) {
        writeFileSync(path, text);
        assert.equal(readFacts(path), null, text.slice(0, 40));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
