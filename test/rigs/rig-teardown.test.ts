/**
 * Nothing hangs, nothing is left behind: a `node --test --test-force-exit` run (as `npm test`) of
 * test/fixtures/rig/failing-setups.ts, whose tests all fail on purpose while rigs are being set up
 * or used, must end by itself with those failures reported, leave no process that it started
 * running (each carries a marker in its environment, so a survivor is found wherever it was
 * re-parented), and leave its temp directory empty.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/rig/failing-setups.js', import.meta.url));
const HOLD = fileURLToPath(new URL('../fixtures/rig/hold-rig.js', import.meta.url));
const GUARD_MS = 90_000;

/** Pids of the processes whose environment holds `marker`. */
function processesMarked(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`).includes(marker)) found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

test(
  'rigs that fail on purpose: the run ends with the failures, no process and no temp file left',
  { timeout: GUARD_MS + 20_000 },
  async () => {
    const marker = `QRVEND_TEARDOWN_MARK=${randomUUID()}`;
    const tmp = mkdtempSync(join(tmpdir(), 'qrvend-teardown-'));
    // A run of its own: without NODE_TEST_CONTEXT the child is a runner, not a file of ours.
    const { NODE_TEST_CONTEXT: _ours, ...env } = process.env;
    const child = spawn(
      process.execPath,
      ['--test', '--test-force-exit', '--test-timeout=60000', '--test-reporter=tap', FIXTURE],
      {
        env: { ...env, TMPDIR: tmp, [marker.split('=')[0]!]: marker.split('=')[1]! },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    let hung = false;
    const guard = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, GUARD_MS);
    try {
      const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
      assert.equal(hung, false, `the run did not end by itself within ${GUARD_MS} ms:\n${out.slice(-3000)}`);
      assert.equal(code, 1, out.slice(-3000));
      assert.match(out, /^# tests 4$/m, out.slice(-3000));
      assert.match(out, /^# pass 0$/m, out.slice(-3000));
      // The test that ran past its deadline is counted as cancelled, the three others as failed.
      assert.match(out, /^# fail 3$/m, out.slice(-3000));
      assert.match(out, /^# cancelled 1$/m, out.slice(-3000));
      assert.match(out, /test timed out after 8000ms/);
      assert.match(
        out,
        /cannot open the MDB adapter port \/dev\/qrvend-no-such-vmc-end/,
        'the set-up failure is reported as it happened',
      );
      // A relay notices its parent's end within a moment: wait for that, then nothing may remain.
      const uuid = marker.split('=')[1]!;
      for (let i = 0; i < 50 && processesMarked(uuid).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      const left = processesMarked(uuid).map(
        (pid) => `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`,
      );
      assert.deepEqual(left, [], 'processes left running');
      assert.deepEqual(readdirSync(tmp), [], 'files left in the temp directory');
    } finally {
      clearTimeout(guard);
      if (child.exitCode === null) child.kill('SIGKILL');
      for (const pid of processesMarked(marker.split('=')[1]!)) process.kill(pid, 'SIGKILL');
      rmSync(tmp, { recursive: true, force: true });
    }
  },
);

test(
  'a process ended by SIGTERM while its rig runs (a file past its deadline) leaves no process and no temp file',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const uuid = randomUUID();
    const tmp = mkdtempSync(join(tmpdir(), 'qrvend-teardown-'));
    const child = spawn(process.execPath, [HOLD], {
      env: { ...process.env, TMPDIR: tmp, QRVEND_TEARDOWN_MARK: uuid },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('close', (_code, signal) => resolve(signal)),
    );
    try {
      for (let i = 0; i < 400 && !/^up \d+$/m.test(out) && child.exitCode === null; i++)
        await new Promise((r) => setTimeout(r, 100));
      assert.match(out, /^up \d+$/m, 'the rig came up');
      assert.ok(processesMarked(uuid).length >= 3, 'the holder, its daemon and its pty relay run');
      child.kill('SIGTERM');
      assert.equal(await exited, 'SIGTERM', 'it still ends by the signal');
      for (let i = 0; i < 50 && processesMarked(uuid).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(processesMarked(uuid), [], 'processes left running');
      assert.deepEqual(readdirSync(tmp), [], 'files left in the temp directory');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      for (const pid of processesMarked(uuid)) process.kill(pid, 'SIGKILL');
      rmSync(tmp, { recursive: true, force: true });
    }
  },
);
