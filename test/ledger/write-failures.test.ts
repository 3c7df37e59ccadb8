/**
 * Write and sync failures injected into a child process that writes the ledger: the fail-io shim
 * (test/native/fail-io.c, built by `npm ci` / `npm test`) is preloaded into it and makes the real
 * write, pwrite, fsync and fdatasync calls on the ledger's files fail with EIO, at random or on
 * command. The ledger must report itself unwritable, recover when writes succeed again, and never
 * lose a row whose method returned. Nothing to install: no libfiu.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { inspectLedger, openLedger } from '../../src/ledger/index.js';
import { tempLedgerPath } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const CHILD = fileURLToPath(new URL('../fixtures/ledger/io-fault-child.js', import.meta.url));
const SHIM = fileURLToPath(new URL('../native/libqrvend-failio.so', import.meta.url));

/** Where the shim reads its orders ("write=P sync=P") and counts the failures it injected. */
interface FaultControl {
  ctl: string;
  count: string;
  set(write: number, sync: number): void;
  injected(): number;
}

function faultControl(dir: string): FaultControl {
  const ctl = join(dir, 'fail-io.ctl');
  const count = join(dir, 'fail-io.count');
  const set = (write: number, sync: number) => writeFileSync(ctl, `write=${write} sync=${sync}\n`);
  set(0, 0);
  return { ctl, count, set, injected: () => (existsSync(count) ? readFileSync(count).length : 0) };
}

interface ChildRun {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the first line matching, or rejects after `ms`. */
  waitFor(pattern: RegExp, ms?: number): Promise<string>;
  exited: Promise<number | null>;
}

function runChild(args: string[], dir: string, faults: FaultControl): ChildRun {
  assert.ok(existsSync(SHIM), `${SHIM} is built by native/build.mjs (npm ci, npm test)`);
  const env = {
    ...process.env,
    LD_PRELOAD: SHIM,
    QRVEND_FAILIO_DIR: dir,
    QRVEND_FAILIO_CTL: faults.ctl,
    QRVEND_FAILIO_COUNT: faults.count,
    QRVEND_FAILIO_SEED: '7',
  };
  const child = spawn(process.execPath, [CHILD, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env });
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
        const timer = setTimeout(
          () => reject(new Error(`no line matching ${pattern} within ${ms} ms; stderr: ${stderr.slice(-2000)}`)),
          ms,
        );
        waiters.push({ pattern, resolve: (l) => (clearTimeout(timer), resolve(l)) });
        void exited.then(() =>
          setTimeout(() => reject(new Error(`child exited before ${pattern}; stderr: ${stderr.slice(-2000)}`)), 50),
        );
      });
    },
  };
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

test(
  'random write and sync failures: the ledger reports unwritable, recovers, and loses no committed row',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const tmp = tempLedgerPath();
    const faults = faultControl(tmp.dir);
    faults.set(0.03, 0.03);
    const run = runChild(['random', tmp.path, '300'], tmp.dir, faults);
    try {
      const done = await run.waitFor(/^done /, 50_000);
      assert.equal(await run.exited, 0);
      const summary = JSON.parse(done.slice(5)) as { committed: number; failed: number };
      assert.ok(faults.injected() > 0, 'the shim injected failures (otherwise this test proves nothing)');
      assert.ok(summary.failed > 0, 'at least one ledger write failed');
      assert.ok(run.lines.includes('writable false'), 'the ledger reported itself unwritable');
      assert.ok(run.lines.includes('writable true'), 'and writable again once writes succeeded');
      assert.ok(
        run.lines.some((l) => /^failed \S+ LEDGER_WRITE_FAILED$/.test(l)),
        'failures surface as LEDGER_WRITE_FAILED',
      );
      const checked = assertNothingLost(tmp.path, run.lines);
      assert.ok(checked > 100, `most transactions got through (${checked})`);
      assert.equal(inspectLedger(tmp.path).integrity, 'ok');
    } finally {
      run.child.kill('SIGKILL');
      tmp.cleanup();
    }
  },
);

async function disk(kind: 'write' | 'sync', name: string): Promise<void> {
  const tmp = tempLedgerPath();
  const faults = faultControl(tmp.dir);
  const run = runChild(['controlled', tmp.path], tmp.dir, faults);
  try {
    await run.waitFor(/^ready \d+$/);
    await run.waitFor(/^committed IOF-C-0002 authorizing$/);
    faults.set(kind === 'write' ? 1 : 0, kind === 'sync' ? 1 : 0);
    await run.waitFor(/^writable false$/);
    await run.waitFor(/^failed /);
    await new Promise((r) => setTimeout(r, 100)); // several more attempts while the disk refuses
    faults.set(0, 0);
    assert.ok(faults.injected() >= 2, `${name}: the shim made calls fail`);
    await run.waitFor(/^writable true$/);
    const down = run.lines.indexOf('writable false');
    const up = run.lines.indexOf('writable true');
    assert.deepEqual(
      run.lines.slice(down, up).filter((l) => l.startsWith('committed ')),
      [],
      `nothing reported committed while ${name}`,
    );
    assert.ok(run.lines.slice(down, up).filter((l) => l.startsWith('failed ')).length >= 2);
    const after = run.lines.length;
    for (let i = 0; i < 200 && run.lines.slice(after).filter((l) => l.startsWith('committed ')).length < 4; i++)
      await new Promise((r) => setTimeout(r, 20));
    run.child.stdin!.write('stop\n');
    await run.waitFor(/^done /);
    assert.equal(await run.exited, 0);
    assertNothingLost(tmp.path, run.lines);
    assert.equal(inspectLedger(tmp.path).integrity, 'ok');
  } finally {
    run.child.kill('SIGKILL');
    tmp.cleanup();
  }
}

test(
  'a disk that refuses syncs (fsync/fdatasync) makes the ledger unwritable until it takes them again',
  { timeout: TEST_DEADLINE_MS },
  () => disk('sync', 'the disk refused syncs'),
);

test(
  'a disk that refuses writes (pwrite/write) makes the ledger unwritable until it takes them again',
  { timeout: TEST_DEADLINE_MS },
  () => disk('write', 'the disk refused writes'),
);
