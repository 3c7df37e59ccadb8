/**
 * Write and sync failures injected with libfiu (`fiu-run -x`, Debian package fiu-utils) into a
 * child process that writes the ledger: the ledger must report itself unwritable, recover when
 * writes succeed again, and never lose a row whose method returned.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { inspectLedger, openLedger } from '../../src/ledger/index.js';
import { tempLedgerPath } from './helpers.js';

const CHILD = fileURLToPath(new URL('../fixtures/ledger/fiu-child.js', import.meta.url));
const haveFiu = spawnSync('fiu-run', ['-h'], { stdio: 'ignore' }).error === undefined && spawnSync('fiu-ctrl', ['-h'], { stdio: 'ignore' }).error === undefined;
const skip = haveFiu ? false : 'fiu-run/fiu-ctrl not installed (apt-get install fiu-utils; .ci/run installs it)';

interface ChildRun {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the first line matching, or rejects after `ms`. */
  waitFor(pattern: RegExp, ms?: number): Promise<string>;
  exited: Promise<number | null>;
}

function runChild(args: string[], ctlBase: string): ChildRun {
  const child = spawn('fiu-run', ['-x', '-f', ctlBase, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: Array<{ pattern: RegExp; resolve: (l: string) => void }> = [];
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of [...waiters]) {
      if (w.pattern.test(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    exited,
    waitFor(pattern, ms = 20_000) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${ms} ms; stderr: ${stderr.slice(-2000)}`)), ms);
        waiters.push({ pattern, resolve: (l) => (clearTimeout(timer), resolve(l)) });
        void exited.then(() => setTimeout(() => reject(new Error(`child exited before ${pattern}; stderr: ${stderr.slice(-2000)}`)), 50));
      });
    },
  };
}

function fiuCtrl(ctlBase: string, pid: string, command: string): void {
  const r = spawnSync('fiu-ctrl', ['-f', ctlBase, '-c', command, pid], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(r.status, 0, `fiu-ctrl ${command}: ${r.stderr}`);
}

/** Every (txId, state) the child saw committed must be on disk, at that state or the next one. */
function assertNothingLost(path: string, lines: string[]): number {
  const committed = new Map<string, string>();
  for (const line of lines) {
    const m = /^committed (\S+) (\S+)$/.exec(line);
    if (m) committed.set(m[1]!, m[2]!);
  }
  const ledger = openLedger({ path, decimalPlaces: 2 });
  try {
    for (const [txId, state] of committed) {
      const tx = ledger.getTransaction(txId);
      assert.ok(tx !== null, `${txId} was committed but is missing`);
      const allowed = state === 'start_accepted' ? ['start_accepted', 'authorizing'] : ['authorizing'];
      assert.ok(allowed.includes(tx.state), `${txId} committed as ${state}, found ${tx.state}`);
    }
  } finally {
    ledger.close();
  }
  return committed.size;
}

test('random write and sync failures: the ledger reports unwritable, recovers, and loses no committed row', { skip, timeout: 60_000 }, async () => {
  const tmp = tempLedgerPath();
  const run = runChild(
    ['-c', 'enable_random name=posix/io/rw/pwrite,probability=0.03', '-c', 'enable_random name=posix/io/sync/*,probability=0.03', process.execPath, CHILD, 'random', tmp.path, '300'],
    join(tmp.dir, 'fiu-ctl'),
  );
  try {
    const done = await run.waitFor(/^done /, 50_000);
    assert.equal(await run.exited, 0);
    const summary = JSON.parse(done.slice(5)) as { committed: number; failed: number };
    assert.ok(summary.failed > 0, 'fiu injected at least one failure (otherwise this test proves nothing)');
    assert.ok(run.lines.includes('writable false'), 'the ledger reported itself unwritable');
    assert.ok(run.lines.includes('writable true'), 'and writable again once writes succeeded');
    assert.ok(run.lines.some((l) => /^failed \S+ LEDGER_WRITE_FAILED$/.test(l)), 'failures surface as LEDGER_WRITE_FAILED');
    const checked = assertNothingLost(tmp.path, run.lines);
    assert.ok(checked > 100, `most transactions got through (${checked})`);
    assert.equal(inspectLedger(tmp.path).integrity, 'ok');
  } finally {
    run.child.kill('SIGKILL');
    tmp.cleanup();
  }
});

test('a disk that refuses syncs makes the ledger unwritable until it takes them again', { skip, timeout: 60_000 }, async () => {
  const tmp = tempLedgerPath();
  const ctl = join(tmp.dir, 'fiu-ctl');
  const run = runChild([process.execPath, CHILD, 'controlled', tmp.path], ctl);
  try {
    const pid = (await run.waitFor(/^ready \d+$/)).split(' ')[1]!;
    await run.waitFor(/^committed FIU-C-0002 authorizing$/);
    fiuCtrl(ctl, pid, 'enable name=posix/io/sync/*');
    await run.waitFor(/^writable false$/);
    await run.waitFor(/^failed /);
    await new Promise((r) => setTimeout(r, 100)); // several more attempts while syncs fail
    fiuCtrl(ctl, pid, 'disable name=posix/io/sync/*');
    await run.waitFor(/^writable true$/);
    const down = run.lines.indexOf('writable false');
    const up = run.lines.indexOf('writable true');
    assert.deepEqual(run.lines.slice(down, up).filter((l) => l.startsWith('committed ')), [], 'nothing reported committed while the disk refused syncs');
    assert.ok(run.lines.slice(down, up).filter((l) => l.startsWith('failed ')).length >= 2);
    const after = run.lines.length;
    for (let i = 0; i < 200 && run.lines.slice(after).filter((l) => l.startsWith('committed ')).length < 4; i++) await new Promise((r) => setTimeout(r, 20));
    run.child.stdin!.write('stop\n');
    await run.waitFor(/^done /);
    assert.equal(await run.exited, 0);
    assertNothingLost(tmp.path, run.lines);
    assert.equal(inspectLedger(tmp.path).integrity, 'ok');
  } finally {
    run.child.kill('SIGKILL');
    tmp.cleanup();
  }
});
