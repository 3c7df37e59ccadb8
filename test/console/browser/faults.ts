/**
 * The console's faults (docs/console.md "Faults"): the broker restarted, and the console's
 * PostgreSQL restarted, each mid-ingest while machines sell; every sale the machines sent ends
 * up stored exactly once (counted by eventId: none missing, none twice, none unknown, and once in
 * the daily totals), with `qrvend console` running as its own process and coming back by itself.
 * Run by `npm run console-test` (run.ts): the broker restart on SQLite and on PostgreSQL, the
 * PostgreSQL restart on a server of its own.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMosquitto, type MosquittoBroker } from '../../../rigs/broker/mosquitto-broker.js';
import { openTestStore, type TestStore } from '../support/store.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';
import {
  SellingMachine,
  startConsoleProcess,
  storedCount,
  tally,
  waitSubscribed,
  type ConsoleProcess,
} from '../support/fault-run.js';

const MACHINES = 10;
const SALES_PER_MACHINE = 60;
/** One sale per machine every 100 ms: the 600 sales take about 6 s, so the fault lands while they sell. */
const PACE_MS = 100;

interface Run {
  broker: MosquittoBroker;
  store: TestStore;
  dir: string;
  console: ConsoleProcess;
  machines: SellingMachine[];
  selling: Promise<void>;
}

/** mosquitto as an operator runs it (persistence on), the console, machines selling. */
async function startRun(name: string, store: TestStore, broker: MosquittoBroker): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), `qrvend-console-${name}-`));
  const consoleProcess = startConsoleProcess(dir, {
    broker: { url: broker.url, protocol: '5' },
    db: store.target,
    instance: `fault-${name}`,
    // One instance: the plain subscription, which mosquitto 2.0 keeps across its restart (a shared
    // one it drops; docs/console.md "Faults").
    subscription: 'plain',
  });
  await waitSubscribed(broker.url, store.db);
  const machines = await Promise.all(
    Array.from({ length: MACHINES }, (_, i) => SellingMachine.connect(broker.url, `vm-${name}-${i}`)),
  );
  const selling = Promise.all(machines.map((m) => m.sell(SALES_PER_MACHINE, name, PACE_MS))).then(() => undefined);
  return { broker, store, dir, console: consoleProcess, machines, selling };
}

async function waitStored(run: Run, atLeast: number, what: string, deadlineMs: number): Promise<number> {
  return waitFor(
    what,
    async () => {
      const n = await storedCount(run.store.db);
      return n >= atLeast ? n : undefined;
    },
    deadlineMs,
  );
}

/**
 * The moment of the fault: a quarter of the sales acknowledged by the broker and some stored, so
 * the machines are still selling and the console still ingesting (on any machine's speed).
 */
async function waitMidIngest(run: Run): Promise<number> {
  const total = MACHINES * SALES_PER_MACHINE;
  const sent = () => run.machines.reduce((n, m) => n + m.acked, 0);
  await waitFor('a quarter of the sales sent', () => sent() >= total / 4, 60_000);
  return waitStored(run, 1, 'a sale stored', 120_000);
}

/** Every sale sent acknowledged by the broker, then all of them stored; then the count by eventId. */
async function settleAndCount(run: Run): Promise<void> {
  await run.selling;
  const total = MACHINES * SALES_PER_MACHINE;
  // On a deadline the count below says which are missing.
  await waitStored(run, total, `all ${total} sales stored`, 120_000).catch(() => undefined);
  // Anything the console might still store twice arrives now, before the count.
  await new Promise((r) => setTimeout(r, 1500));
  const t = await tally(run.store.db, run.machines);
  assert.deepEqual(
    { sent: t.sent, stored: t.stored, counted: t.counted, missing: t.missing, twice: t.twice, unknown: t.unknown },
    { sent: total, stored: total, counted: total, missing: [], twice: [], unknown: [] },
    `the console's log ends: ${run.console.log.slice(-8).join('\n')}`,
  );
  assert.equal(run.console.child.exitCode, null, 'the console kept running');
}

async function endRun(run: Run | null): Promise<void> {
  for (const m of run?.machines ?? []) await m.close();
  await run?.console.stop();
  if (run !== null) rmSync(run.dir, { recursive: true, force: true });
}

function logged(run: Run, pattern: RegExp): string | undefined {
  return run.console.log.find((line) => pattern.test(line));
}

test(
  'the broker restarted mid-ingest: every sale stored exactly once, the console back by itself',
  {
    timeout: 400_000,
  },
  async () => {
    const broker = await startMosquitto({ persistence: true });
    const store = await openTestStore();
    let run: Run | null = null;
    try {
      run = await startRun('broker', store, broker);
      const total = MACHINES * SALES_PER_MACHINE;
      const atStop = await waitMidIngest(run);
      await broker.stop();
      // The machines go on selling into their outboxes while the broker is away.
      const ackedAtStop = run.machines.reduce((n, m) => n + m.acked, 0);
      await new Promise((r) => setTimeout(r, 3000));
      await broker.start();
      assert.ok(atStop < total && ackedAtStop < total, `stopped mid-ingest (${atStop} of ${total} stored then)`);
      await settleAndCount(run);
      assert.ok(logged(run, /broker connection lost/), 'the console said it lost the broker');
      assert.ok(logged(run, /broker connection back/), 'the console said it was back');
    } finally {
      await endRun(run);
      await store.remove();
      await broker.close();
    }
  },
);

test(
  'the console database (PostgreSQL) restarted mid-ingest: nothing acked uncommitted, each sale stored once',
  {
    timeout: 400_000,
  },
  async (t) => {
    if ((process.env.QRVEND_CONSOLE_TEST_PG ?? '') === '') {
      t.skip('needs PostgreSQL (npm run console-test runs it in its PostgreSQL pass)');
      return;
    }
    // A server of its own: the test stops it, and the other tests' server must stay up.
    let pg: TestPostgres | null = null;
    const broker = await startMosquitto({ persistence: true });
    let store: TestStore | null = null;
    let run: Run | null = null;
    let halted = false;
    const previous = process.env.QRVEND_CONSOLE_TEST_PG;
    try {
      pg = await startPostgres();
      process.env.QRVEND_CONSOLE_TEST_PG = pg.server;
      store = await openTestStore();
      run = await startRun('pg', store, broker);
      const total = MACHINES * SALES_PER_MACHINE;
      const atStop = await waitMidIngest(run);
      pg.halt();
      halted = true;
      const consoleRun = run;
      const said = () => logged(consoleRun, /database unreachable/);
      await waitFor('the console saying the database is unreachable', said, 60_000).catch((err: Error) => {
        const tail = consoleRun.console.log.slice(-8).join('\n');
        throw new Error(`${err.message} (console exit ${consoleRun.console.child.exitCode}); its log ends: ${tail}`);
      });
      pg.resume();
      halted = false;
      assert.ok(atStop < total, `stopped mid-ingest (${atStop} of ${total} stored then)`);
      await settleAndCount(run);
      assert.ok(logged(run, /database reachable again/), 'the console said the database was back');
    } finally {
      process.env.QRVEND_CONSOLE_TEST_PG = previous;
      if (halted) pg?.resume();
      await endRun(run);
      await store?.remove().catch(() => undefined);
      pg?.stop();
      await broker.close();
    }
  },
);
