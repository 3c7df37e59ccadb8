/**
 * scripts/qrvend-logs against a stand-in journalctl (JOURNALCTL=...) that records its arguments
 * and prints a canned journal: the filters and the pretty form are checked on real NDJSON lines.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, runScript } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const LOGS = join(REPO, 'scripts/qrvend-logs');
const JOURNAL = [
  '{"level":"info","time":"2024-05-01T10:00:00.000Z","name":"mdb","msg":"reader enabled"}',
  '{"level":"warn","time":"2024-05-01T10:00:01.000Z","name":"gateway","msg":"Settlement retry","txId":"TX-AAA-1"}',
  '{"level":"debug","time":"2024-05-01T10:00:02.000Z","name":"mdb","msg":"line","txId":"TX-BBB-2"}',
  '{"level":"error","time":"2024-05-01T10:00:03.000Z","name":"ledger","msg":"write failed","txId":"TX-AAA-1"}',
  'TypeError: something crashed',
  '    at stack (file.js:1:1)',
];

function fakeJournal(): { dir: string; env: NodeJS.ProcessEnv; args(): string } {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-logs-'));
  writeFileSync(join(dir, 'journal.txt'), `${JOURNAL.join('\n')}\n`);
  const fake = join(dir, 'journalctl');
  writeFileSync(fake, `#!/bin/sh\nprintf '%s\\n' "$*" > '${dir}/args'\ncat '${dir}/journal.txt'\n`);
  chmodSync(fake, 0o755);
  return { dir, env: { JOURNALCTL: fake }, args: () => readFileSync(join(dir, 'args'), 'utf8').trim() };
}

test(
  '--level keeps that level and worse plus non-JSON lines (crash traces)',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const j = fakeJournal();
    try {
      const run = await runScript(LOGS, ['--level', 'warn', '--since', '1 hour ago'], { env: j.env });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(run.stdout.trim().split('\n'), [JOURNAL[1], JOURNAL[3], JOURNAL[4], JOURNAL[5]]);
      assert.equal(j.args(), '-u qrvend -o cat --no-pager --since 1 hour ago');
    } finally {
      rmSync(j.dir, { recursive: true, force: true });
    }
  },
);

test(
  '--tx keeps one transaction; --pretty prints readable lines; --follow asks journalctl to follow',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const j = fakeJournal();
    try {
      const run = await runScript(LOGS, ['--tx', 'TX-AAA-1', '--pretty', '-f'], { env: j.env });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(run.stdout.trim().split('\n'), [
        '2024-05-01T10:00:01.000Z WARN  [gateway] Settlement retry {"txId":"TX-AAA-1"}',
        '2024-05-01T10:00:03.000Z ERROR [ledger] write failed {"txId":"TX-AAA-1"}',
      ]);
      assert.equal(j.args(), '-u qrvend -o cat --no-pager -n 50 -f');
    } finally {
      rmSync(j.dir, { recursive: true, force: true });
    }
  },
);

test('bad input is refused with a usage error; --help works', { timeout: TEST_DEADLINE_MS }, async () => {
  const j = fakeJournal();
  try {
    const bad = await runScript(LOGS, ['--level', 'loud'], { env: j.env });
    assert.equal(bad.code, 64);
    assert.match(bad.stderr, /unknown level 'loud'/);
    const help = await runScript(LOGS, ['--help'], { env: j.env });
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: qrvend-logs/);
  } finally {
    rmSync(j.dir, { recursive: true, force: true });
  }
});
