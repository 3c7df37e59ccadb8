/**
 * Vend approval inside a static QR session, over a real pty (design section 7: p99 <= 1 ms, and
 * <= 1.5x the idle value while the workers are saturated), and the daemon's main-thread
 * event-loop delay during the saturated run (p99 <= 2 ms).
 *
 * Idle: a session opened by a wallet Start (funds = staticQr.preauthAmount), then vends 5 ms apart.
 * Saturated: the same, while the daemon's outbox drains 10,000 Settlements (seeded into its ledger
 * before it starts) through a slow gateway (each request held SLOW_GATEWAY_MS by a proxy), so the
 * payment and network side is busy for the whole measurement.
 */
import { measured, notMeasured, DAEMON_PENDING, type Check, type Figure } from './figure.js';
import { Budget, waitFor } from './support/budget.js';
import { cpuWindow } from './support/cpu.js';
import { daemonBuilt, STATS_INTERVAL_MS, type LoopDelayReport } from './support/daemon.js';
import { authorizeAll, benchBuilders, benchClient, type GatewayProcess } from './support/gateway.js';
import { DaemonRig } from './support/rig.js';
import { seedSettlements } from './support/seed-outbox.js';
import { endSession, openStaticSession, runVends } from './support/vmc.js';
import { loadConfig } from '../src/config/load.js';
import { percentile, summarize } from './stats.js';

const VENDS = 2000;
const WARM_UP_VENDS = 50;
const GAP_MS = 5;
const PRICE = 1;
const PREAUTH = 100_000;
const OUTBOX_ITEMS = 10_000;
/** How long the slow gateway holds each request. */
export const SLOW_GATEWAY_MS = 20;

const IDLE_TARGET = { text: 'p99 <= 1 ms', checks: [{ stat: 'p99' as const, op: '<=' as const, limit: 1 }] };
const IDLE = { id: 'vend-latency-idle', what: 'Vend approval in a static QR session, idle (request line in to approval line out, pty)', unit: 'ms', target: IDLE_TARGET };

function saturatedTarget(idleP99: number | null): { text: string; checks: Check[] } {
  const checks: Check[] = [{ stat: 'p99', op: '<=', limit: 1 }];
  if (idleP99 !== null) checks.push({ stat: 'p99', op: '<=', limit: Math.round(idleP99 * 1.5 * 1000) / 1000, derived: `1.5 x idle p99 (${idleP99} ms)` });
  return { text: 'p99 <= 1 ms and <= 1.5 x idle p99', checks };
}
const SATURATED_WHAT = `Vend approval while 10,000 outbox items drain through a slow gateway (${SLOW_GATEWAY_MS} ms per request)`;

const LOOP = {
  id: 'event-loop-delay',
  what: 'Daemon main-thread event-loop delay during the saturated vend run (worst stats interval)',
  unit: 'ms',
  target: { text: 'p99 <= 2 ms', checks: [{ stat: 'p99' as const, op: '<=' as const, limit: 2 }] },
};

interface Run {
  latencies: number[];
  loopDelays: LoopDelayReport[];
  context: Record<string, string | number | boolean | null>;
}

async function measureInSession(rig: DaemonRig, budget: Budget): Promise<Omit<Run, 'context'> & { stoppedByBudget: boolean; cpu: Record<string, number> }> {
  await openStaticSession(rig.sim, rig.files, Math.min(30_000, budget.leftMs));
  await runVends(rig.sim, WARM_UP_VENDS, { price: PRICE, gapMs: GAP_MS, budget });
  const firstReport = rig.daemon.loopDelays.length;
  const window = cpuWindow(rig.daemon.pid);
  const run = await runVends(rig.sim, VENDS, { price: PRICE, gapMs: GAP_MS, budget });
  const cpu = window.end();
  // The stats line after the window covers its last interval (if the daemon logs stats at all).
  const reportsWanted = rig.daemon.loopDelays.length + 1;
  if (reportsWanted > 1) await waitFor(() => rig.daemon.loopDelays.length >= reportsWanted, 3 * STATS_INTERVAL_MS, 50);
  endSession(rig.sim);
  return { latencies: run.latencies, loopDelays: rig.daemon.loopDelays.slice(firstReport), stoppedByBudget: run.stoppedByBudget, cpu };
}

async function idleRun(gateway: GatewayProcess, budget: Budget): Promise<Run> {
  const rig = await DaemonRig.start({ gatewayUrl: gateway.url, preauthAmount: PREAUTH });
  try {
    const r = await measureInSession(rig, budget);
    const loopP99s = r.loopDelays.map((d) => d.p99);
    return {
      ...r,
      context: {
        vendGapMs: GAP_MS,
        warmUpVends: WARM_UP_VENDS,
        budgetStopped: r.stoppedByBudget,
        ...r.cpu,
        eventLoopDelayWorstIntervalP99Ms: loopP99s.length > 0 ? Math.max(...loopP99s) : null,
      },
    };
  } finally {
    await rig.stop();
  }
}

async function saturatedRun(gateway: GatewayProcess, budget: Budget): Promise<Run> {
  const config = loadConfig({ env: {} }).config;
  const builders = benchBuilders(config);
  const client = benchClient(gateway.url);
  const txIds = Array.from({ length: OUTBOX_ITEMS }, (_, i) => `bench-sat-${String(i + 1).padStart(6, '0')}`);
  let authorized;
  try {
    authorized = await authorizeAll(client, builders, txIds, 10);
  } finally {
    client.close();
  }
  const seed = (storePath: string) => {
    seedSettlements({ path: storePath, decimalPlaces: config.machine.decimalPlaces, builders, authorized, authAmount: 10, price: 1.5 });
  };
  gateway.setDelay(SLOW_GATEWAY_MS);
  const rig = await DaemonRig.start({ gatewayUrl: gateway.slowUrl, preauthAmount: PREAUTH, seed });
  try {
    const before = (await gateway.summary()).byState.settled ?? 0;
    const r = await measureInSession(rig, budget);
    const after = (await gateway.summary()).byState.settled ?? 0;
    return {
      ...r,
      context: {
        vendGapMs: GAP_MS,
        slowGatewayMsPerRequest: SLOW_GATEWAY_MS,
        'store.concurrency': config.store.concurrency,
        outboxSeeded: OUTBOX_ITEMS,
        settledBeforeWindow: before,
        settledAfterWindow: after,
        stillQueuedAfterWindow: OUTBOX_ITEMS - after,
        budgetStopped: r.stoppedByBudget,
        ...r.cpu,
      },
    };
  } finally {
    gateway.setDelay(0);
    await rig.stop();
  }
}

function loopFigure(run: Run | null, failure: string | null): Figure {
  if (run === null) return notMeasured(LOOP, 'error', failure ?? 'the saturated run failed');
  const reports = run.loopDelays;
  if (reports.length === 0) return notMeasured({ ...LOOP, context: run.context }, 'error', 'the daemon logged no stats line with eventLoopDelay during the run');
  const p50s = reports.map((r) => r.p50).sort((a, b) => a - b);
  return measured(
    { ...LOOP, context: { ...run.context, statsIntervalMs: STATS_INTERVAL_MS, reports: reports.length, intervalsWithP99Over2Ms: reports.filter((r) => r.p99 > 2).length } },
    // p50: the median interval's p50; p99: the worst interval's p99; max: the worst delay seen.
    { samples: reports.length, summary: { count: reports.length, min: p50s[0]!, p50: percentile(p50s, 0.5), p99: Math.max(...reports.map((r) => r.p99)), max: Math.max(...reports.map((r) => r.max)), mean: Number.NaN } },
  );
}

export async function benchVendLatency(budget: Budget, gateway: GatewayProcess): Promise<Figure[]> {
  if (!daemonBuilt()) {
    return [
      notMeasured(IDLE, 'pending', DAEMON_PENDING),
      notMeasured({ id: 'vend-latency-saturated', what: SATURATED_WHAT, unit: 'ms', target: saturatedTarget(null) }, 'pending', DAEMON_PENDING),
      notMeasured(LOOP, 'pending', DAEMON_PENDING),
    ];
  }
  const figures: Figure[] = [];
  let idleP99: number | null = null;
  try {
    const idle = await idleRun(gateway, budget.slice(budget.leftMs / 3));
    const s = summarize(idle.latencies);
    const figure = measured({ ...IDLE, context: idle.context }, { samples: idle.latencies.length, summary: s });
    idleP99 = figure.p99;
    figures.push(figure);
  } catch (err) {
    figures.push(notMeasured(IDLE, 'error', (err as Error).message));
  }
  const satBase = { id: 'vend-latency-saturated', what: SATURATED_WHAT, unit: 'ms', target: saturatedTarget(idleP99) };
  try {
    const sat = await saturatedRun(gateway, budget);
    figures.push(measured({ ...satBase, context: sat.context }, { samples: sat.latencies.length, summary: summarize(sat.latencies) }));
    figures.push(loopFigure(sat, null));
  } catch (err) {
    figures.push(notMeasured(satBase, 'error', (err as Error).message));
    figures.push(loopFigure(null, (err as Error).message));
  }
  return figures;
}
