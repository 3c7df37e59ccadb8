/**
 * Resident memory of the daemon (docs/decisions/targets.md: steady state <= 1.25x a bare Node process with
 * two worker threads started the same way, growth <= 2 MB after 100,000 vends). VmRSS of the daemon process from
 * /proc/<pid>/status: the main thread and every
 * worker share one address space, so this is all threads.
 *
 * Static QR sessions of VENDS_PER_SESSION vends each run back to back through the pty. The
 * warm-up runs until the daemon's RSS has stopped rising: at least MIN_WARM_UP_SESSIONS sessions,
 * then until the last WARM_UP_WINDOW sessions together added less than WARM_UP_FLAT_MB (at most
 * MAX_WARM_UP_SESSIONS). A fixed 5-session warm-up measured the process before it had reached its
 * working size: RSS kept rising for the next 10,000-20,000 vends and then stayed flat, so the
 * "growth" was mostly start-up, not a leak (BENCHMARKS.md). After the warm-up, all settled, the
 * daemon rests and RSS is sampled: that is the steady state. Then 100,000 vends; the last
 * Settlement is delivered, the daemon rests, RSS is sampled again: the growth is the difference
 * of the two medians.
 */
import { measured, notMeasured, DAEMON_PENDING, type Figure, type Target } from './figure.js';
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Budget, sleep } from './support/budget.js';
import { MAIN_THREAD_NODE_FLAGS } from '../src/daemon/heap-limits.js';
import { daemonBuilt, type DaemonProcess } from './support/daemon.js';
import type { GatewayProcess } from './support/gateway.js';
import { DaemonRig } from './support/rig.js';
import { endSession, openStaticSession, runVends } from './support/vmc.js';
import { round } from './stats.js';

const VENDS_PER_SESSION = 1000;
const MIN_WARM_UP_SESSIONS = 5;
const MAX_WARM_UP_SESSIONS = 40;
const WARM_UP_WINDOW = 5;
const WARM_UP_FLAT_MB = 1;
const TOTAL_VENDS = 100_000;
const PRICE = 1;
/** Time kept for the cool-down and the second sampling when the budget runs short. */
const COOL_DOWN_RESERVE_MS = 20_000;

const STEADY = {
  id: 'memory-steady',
  what:
    'Daemon resident memory (VmRSS, all threads) at steady state, ' +
    'over the floor (bare Node, two idle workers, same flags)',
  unit: 'x floor',
  target: {
    text: '<= 1.25 x the floor measured in the same run',
    checks: [{ stat: 'value' as const, op: '<=' as const, limit: 1.25 }],
  },
};
/** Reference: the daemon over the libraries it is made of (support/memory-stack-floor.ts), same run. */
const STACK = {
  id: 'memory-steady-stack-floor',
  what:
    'Daemon resident memory at steady state over the stack floor (the bare floor plus serialport, ' +
    "pino, better-sqlite3, got and zod loaded and used once, none of qrvend's code)",
  unit: 'x stack floor',
  target: {
    text: 'reference: what qrvend adds to its libraries (the judged figure is memory-steady)',
    checks: [] as Target['checks'],
  },
};
const GROWTH = {
  id: 'memory-growth',
  what: 'Daemon resident memory growth over 100,000 vends',
  unit: 'MB',
  target: { text: '<= 2 MB after 100,000 vends', checks: [{ stat: 'value' as const, op: '<=' as const, limit: 2 }] },
};

/**
 * Median RSS over a few samples once the daemon has had time to rest: both threads collect (and
 * compact) once they have been quiet for 2 s after a session (src/daemon/heap-limits.ts
 * quietCollector), so after 6 s both samples are taken in the same state, after those collections,
 * not one before and one after.
 */
async function restingRss(daemon: DaemonProcess): Promise<number> {
  await sleep(6000);
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(daemon.rssMb());
    await sleep(200);
  }
  samples.sort((a, b) => a - b);
  return samples[2]!;
}

/** The payment worker reports its heap with its health message, this often (src/daemon/payment-worker.ts). */
const PAYMENT_HEALTH_EVERY_MS = 5000;

/**
 * Each thread's V8 heap (used / committed, MB) from the daemon's latest stats line, as context
 * members named e.g. mainHeapBeforeMb ('' when the daemon has not reported it yet). Read after one
 * more payment health interval, so the payment worker's figure was taken after its quiet
 * collection too (an earlier one can predate it and show the burst's garbage).
 */
async function threadHeapsMb(daemon: DaemonProcess): Promise<(when: string) => Record<string, string>> {
  await sleep(PAYMENT_HEALTH_EVERY_MS + 500);
  const memory = daemon.lastMemory;
  const out: Record<string, string> = {};
  for (const thread of ['main', 'payment']) {
    const m = memory?.[thread] as { heapUsedBytes?: number; heapTotalBytes?: number } | null | undefined;
    out[thread] =
      m?.heapUsedBytes !== undefined && m.heapTotalBytes !== undefined
        ? `${round(m.heapUsedBytes / 2 ** 20, 1)} / ${round(m.heapTotalBytes / 2 ** 20, 1)}`
        : '';
  }
  return (when) => ({ [`mainHeap${when}Mb`]: out.main!, [`paymentHeap${when}Mb`]: out.payment! });
}

function rssMbOf(pid: number): number {
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb) / 1024;
}

/**
 * A floor's resting RSS: support/memory-floor.js (or the stack floor) started as the launcher
 * starts `qrvend run` (MAIN_THREAD_NODE_FLAGS, MALLOC_ARENA_MAX=2), sampled like the daemon (rest,
 * median of five).
 */
async function floorRss(script: 'memory-floor' | 'memory-stack-floor' = 'memory-floor'): Promise<number> {
  const child = fork(fileURLToPath(new URL(`./support/${script}.js`, import.meta.url)), [], {
    execArgv: [...MAIN_THREAD_NODE_FLAGS],
    env: { ...process.env, MALLOC_ARENA_MAX: '2' },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${script} did not start within 10 s`)), 10_000);
      child.once('message', () => {
        clearTimeout(timer);
        resolve();
      });
      child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    });
    await sleep(6000);
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) {
      samples.push(rssMbOf(child.pid!));
      await sleep(200);
    }
    return samples.sort((a, b) => a - b)[2]!;
  } finally {
    child.kill('SIGTERM');
  }
}

async function settledCount(gateway: GatewayProcess): Promise<number> {
  return (await gateway.summary()).byState.settled ?? 0;
}

async function sessions(
  rig: DaemonRig,
  gateway: GatewayProcess,
  count: number,
  budget: Budget,
  onSession: () => void,
): Promise<number> {
  let vends = 0;
  for (let s = 0; s < count && budget.leftMs > COOL_DOWN_RESERVE_MS; s++) {
    await openStaticSession(rig.sim, rig.files, 30_000);
    const run = await runVends(rig.sim, VENDS_PER_SESSION, {
      price: PRICE,
      gapMs: 0,
      budget: budget.slice(budget.leftMs - COOL_DOWN_RESERVE_MS),
    });
    vends += run.latencies.length;
    endSession(rig.sim);
    onSession();
    if (run.stoppedByBudget) break;
  }
  return vends;
}

export async function benchMemory(budget: Budget, gateway: GatewayProcess): Promise<Figure[]> {
  if (!daemonBuilt()) return [STEADY, STACK, GROWTH].map((f) => notMeasured(f, 'pending', DAEMON_PENDING));
  let rig: DaemonRig | null = null;
  try {
    rig = await DaemonRig.start({ gatewayUrl: gateway.url, preauthAmount: VENDS_PER_SESSION * PRICE });
    const settledAtStart = await settledCount(gateway);
    let sessionsDone = 0;
    let peak = rig.daemon.rssMb();
    const track = () => {
      sessionsDone += 1;
      peak = Math.max(peak, rig!.daemon.rssMb());
    };
    const allSettled = async () => {
      let settled = 0;
      for (const until = Date.now() + 15_000; Date.now() < until; await sleep(200)) {
        settled = (await settledCount(gateway)) - settledAtStart;
        if (settled >= sessionsDone) return true;
      }
      return false;
    };
    const startRss = rig.daemon.rssMb();
    // RSS after each warm-up session; done when the last WARM_UP_WINDOW sessions added < WARM_UP_FLAT_MB.
    const warmUpRss: number[] = [rig.daemon.rssMb()];
    const flat = () =>
      warmUpRss.length > WARM_UP_WINDOW && warmUpRss.at(-1)! - warmUpRss.at(-1 - WARM_UP_WINDOW)! < WARM_UP_FLAT_MB;
    while (warmUpRss.length - 1 < MAX_WARM_UP_SESSIONS && (warmUpRss.length - 1 < MIN_WARM_UP_SESSIONS || !flat())) {
      if ((await sessions(rig, gateway, 1, budget, track)) === 0) break;
      warmUpRss.push(rig.daemon.rssMb());
    }
    const warmUpSessions = warmUpRss.length - 1;
    await allSettled();
    const before = await restingRss(rig.daemon);
    const heapsBefore = await threadHeapsMb(rig.daemon);
    const anonBefore = rig.daemon.rssAnonMb();
    const floor = await floorRss();
    const stackFloor = await floorRss('memory-stack-floor');
    const t0 = Date.now();
    const vends = await sessions(rig, gateway, Math.ceil(TOTAL_VENDS / VENDS_PER_SESSION), budget, track);
    const vendSeconds = (Date.now() - t0) / 1000;
    const delivered = await allSettled();
    const after = await restingRss(rig.daemon);
    const heapsAfter = await threadHeapsMb(rig.daemon);
    const anonAfter = rig.daemon.rssAnonMb();
    const context = {
      floorRssMb: round(floor, 1),
      daemonJsWorkers: 1,
      rssAtEnableMb: round(startRss, 1),
      rssBeforeMb: round(before, 1),
      rssAfterMb: round(after, 1),
      rssPeakMb: round(peak, 1),
      // Where the RSS is: anonymous (heaps, malloc) vs file-backed (the node binary, libraries),
      // and each isolate's V8 heap from the daemon's own stats line (used / committed MB).
      rssAnonBeforeMb: round(anonBefore, 1),
      rssAnonAfterMb: round(anonAfter, 1),
      ...heapsBefore('Before'),
      ...heapsAfter('After'),
      warmUpVends: warmUpSessions * VENDS_PER_SESSION,
      warmUpFlat: flat(),
      rssAfterWarmUpSessionsMb: warmUpRss.map((r) => Math.round(r)).join(' '),
      vendsPerSession: VENDS_PER_SESSION,
      vends,
      vendsPerSecond: round(vends / vendSeconds, 1),
      allSettlementsDelivered: delivered,
    };
    const detail =
      `daemon ${round(before, 1)} MB / floor ${round(floor, 1)} MB (bare Node + ` +
      `2 idle workers, the launcher's heap flags and MALLOC_ARENA_MAX=2); the ` +
      `bench's daemon runs one JS worker (payment; no display configured)`;
    const steady = measured({ ...STEADY, context, detail }, { samples: 5, value: before / floor });
    const stackDetail =
      `daemon ${round(before, 1)} MB / stack floor ${round(stackFloor, 1)} MB; the stack ` +
      `floor is ${round(stackFloor / floor, 3)}x the bare floor (${round(floor, 1)} MB)`;
    const stack = measured(
      {
        ...STACK,
        context: {
          stackFloorRssMb: round(stackFloor, 1),
          floorRssMb: round(floor, 1),
          stackFloorOverFloor: round(stackFloor / floor, 3),
          rssBeforeMb: round(before, 1),
        },
        detail: stackDetail,
      },
      { samples: 5, value: before / stackFloor },
    );
    const growth = measured({ ...GROWTH, context }, { samples: vends, value: after - before });
    if (vends < TOTAL_VENDS) {
      growth.status = 'error';
      growth.pass = null;
      growth.reason =
        `only ${vends} of ${TOTAL_VENDS} vends fitted in the time budget (` +
        `${round(vendSeconds, 1)} s); the growth shown is over those`;
    }
    return [steady, stack, growth];
  } catch (err) {
    const reason = `${(err as Error).message}${rig ? ` (daemon: ${rig.daemon.describeProblems()})` : ''}`;
    return [
      notMeasured(STEADY, 'error', reason),
      notMeasured(STACK, 'error', reason),
      notMeasured(GROWTH, 'error', reason),
    ];
  } finally {
    await rig?.stop();
  }
}
