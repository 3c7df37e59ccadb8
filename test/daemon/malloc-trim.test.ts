/**
 * The malloc_trim addon (native/malloc-trim.c, src/daemon/malloc-trim.ts): built by `npm run
 * build` wherever Node's headers are installed, and it really hands freed malloc memory back.
 * Measured in a child process of its own, so other tests' allocations do not blur the figure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../support/deadlines.js';

const MODULE = join(dirname(fileURLToPath(import.meta.url)), '../../src/daemon/malloc-trim.js');
const HEADERS = join(dirname(process.execPath), '..', 'include', 'node', 'node_api.h');

// 20,000 malloc'd buffers of ~4 KB (80 MB), 9 in 10 freed: free chunks between live ones, which
// glibc keeps resident (only the top of a heap goes back by itself). RssAnon before and after.
const SCRIPT = `
const { trimMalloc, mallocTrimAvailable } = await import(${JSON.stringify(MODULE)});
const { readFileSync } = await import('node:fs');
const anonMb = () => Number(/RssAnon:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
let keep = [];
for (let i = 0; i < 20000; i++) keep.push(Buffer.alloc(4000 + (i % 7) * 100));
keep = keep.filter((_, i) => i % 10 === 0);
gc(); gc();
const before = anonMb();
const released = trimMalloc();
process.stdout.write(JSON.stringify({ available: mallocTrimAvailable(), released, before, after: anonMb(), \
kept: keep.length }));
`;

test(
  'malloc_trim hands freed malloc memory back to the system',
  { timeout: TEST_DEADLINE_MS, skip: existsSync(HEADERS) ? false : `no ${HEADERS}: the addon is not built here` },
  () => {
    const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', SCRIPT], {
      encoding: 'utf8',
      timeout: CHILD_DEADLINE_MS,
    });
    assert.equal(run.status, 0, run.stderr);
    const r = JSON.parse(run.stdout) as { available: boolean; released: boolean; before: number; after: number };
    assert.equal(r.available, true, 'dist/src/native/qrvend-trim.node loads');
    assert.equal(r.released, true);
    // About 70 MB were freed; at least half of it must leave the process's resident memory.
    assert.ok(r.before - r.after > 35, `RssAnon ${r.before.toFixed(1)} -> ${r.after.toFixed(1)} MB`);
  },
);
