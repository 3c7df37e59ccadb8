/**
 * `npm run bench`: every target of docs/decisions/targets.md, measured in sequence on this machine, each
 * within its own time budget (about 12 minutes on 2 cores; the budgets add up to 22 minutes, each
 * with a backstop 45 s past it). Writes
 * bench/results.json and prints a table. Figures that need the daemon say `pending` while
 * `qrvend run` is not built. Exit code 0 when every benchmark ran (a missed target is a finding,
 * not a crash); 1 when one of them failed to run.
 *
 * `node dist/bench/run.js ledger-write qr-render` runs only those (results go to
 * bench/results.partial.json so the full run's file is kept); `--quick` runs all but the long
 * ones (memory: 100,000 vends; outbox-drain; the console's million sales), about half the time.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchColdStart } from './cold-start.js';
import { notMeasured, type Figure } from './figure.js';
import { benchLedgerWrite } from './ledger-write.js';
import { benchMemory } from './memory.js';
import { benchOutboxDrain } from './outbox-drain.js';
import { benchQrRender } from './qr-render.js';
import { formatTable, updateBenchmarksMd, writeResults } from './report.js';
import { Budget } from './support/budget.js';
import { GatewayProcess } from './support/gateway.js';
import { machineInfo, REPO_ROOT } from './support/machine.js';
import { benchVendLatency } from './vend-latency.js';
import { benchSlowlorisVend } from './slowloris-vend.js';
// Fleet link (docs/decisions/fleet-link-first.md): the broker stalled during vends.
import { benchFleetBrokerStall } from './fleet-broker-stall.js';
import { benchStorageWear } from './storage-wear.js';
import { benchIdleCost } from './idle-cost.js';
import { benchStartOverhead } from './start-overhead.js';
import { benchCpuBudget } from './cpu-budget.js';
// The operator console (docs/console.md): ingest, the overview and sales pages, its memory.
import { benchConsole, CONSOLE_FIGURES } from './console.js';
// The route (docs/console.md, "A day on the route"): pick list, "needs a visit", stock at ingest.
import { benchRoute, ROUTE_FIGURES } from './route.js';

interface Bench {
  id: string;
  /** Figures it produces (for the placeholder when it cannot run at all). */
  figures: string[];
  budgetMs: number;
  /** Left out by --quick. */
  long?: boolean;
  run(budget: Budget, shared: Shared): Promise<Figure[]>;
}

interface Shared {
  gateway(): Promise<GatewayProcess>;
}

const BENCHES: Bench[] = [
  { id: 'ledger-write', figures: ['ledger-write'], budgetMs: 20_000, run: (b) => benchLedgerWrite(b) },
  { id: 'qr-render', figures: ['qr-render'], budgetMs: 20_000, run: (b) => benchQrRender(b) },
  { id: 'outbox-drain', figures: ['outbox-drain'], budgetMs: 90_000, long: true, run: (b) => benchOutboxDrain(b) },
  {
    id: 'cold-start',
    figures: ['cold-start'],
    budgetMs: 40_000,
    run: async (b, s) => benchColdStart(b, await s.gateway()),
  },
  {
    id: 'vend-latency',
    figures: ['vend-latency-idle', 'vend-latency-saturated', 'event-loop-delay'],
    budgetMs: 130_000,
    run: async (b, s) => benchVendLatency(b, await s.gateway()),
  },
  {
    id: 'vend-latency-slowloris',
    figures: ['vend-latency-slowloris'],
    budgetMs: 60_000,
    run: async (b, s) => benchSlowlorisVend(b, await s.gateway()),
  },
  // Fleet link (docs/decisions/fleet-link-first.md): a stalled MQTT broker changes nothing for vends.
  {
    id: 'vend-latency-broker-stalled',
    figures: ['vend-latency-broker-up', 'vend-latency-signed-commands', 'vend-latency-broker-stalled'],
    budgetMs: 150_000,
    run: async (b, s) => benchFleetBrokerStall(b, await s.gateway()),
  },
  {
    id: 'start-overhead',
    figures: [
      'start-overhead-static',
      'start-overhead-static-beyond-fsync',
      'start-overhead-static-floor',
      'start-overhead-static-beyond-floor',
      'start-overhead-dynamic',
    ],
    budgetMs: 90_000,
    run: async (b, s) => benchStartOverhead(b, await s.gateway()),
  },
  {
    id: 'storage-wear',
    figures: ['storage-per-sale-static', 'storage-per-sale-dynamic'],
    budgetMs: 300_000,
    run: async (b, s) => benchStorageWear(b, await s.gateway()),
  },
  {
    id: 'idle-cost',
    figures: ['idle-cpu'],
    budgetMs: 90_000,
    run: async (b, s) => benchIdleCost(b, await s.gateway()),
  },
  {
    id: 'cpu-budget',
    figures: ['budget-cold-start', 'budget-vend-latency', 'budget-start-overhead-static'],
    budgetMs: 120_000,
    run: async (b, s) => benchCpuBudget(b, await s.gateway()),
  },
  {
    id: 'memory',
    figures: ['memory-steady', 'memory-steady-stack-floor', 'memory-growth'],
    budgetMs: 230_000,
    long: true,
    run: async (b, s) => benchMemory(b, await s.gateway()),
  },
  { id: 'console', figures: CONSOLE_FIGURES, budgetMs: 240_000, long: true, run: (b) => benchConsole(b) },
  { id: 'route', figures: ROUTE_FIGURES, budgetMs: 180_000, long: true, run: (b) => benchRoute(b) },
];

/** Past its budget a benchmark should have stopped by itself; this is the backstop. */
const GRACE_MS = 45_000;

async function runOne(bench: Bench, shared: Shared): Promise<Figure[]> {
  const placeholder = (reason: string) =>
    bench.figures.map((id) =>
      notMeasured({ id, what: id, unit: '-', target: { text: '-', checks: [] } }, 'error', reason),
    );
  let timer: NodeJS.Timeout | undefined;
  const backstop = new Promise<Figure[]>((resolve) => {
    timer = setTimeout(
      () => resolve(placeholder(`did not finish within ${(bench.budgetMs + GRACE_MS) / 1000} s`)),
      bench.budgetMs + GRACE_MS,
    );
  });
  try {
    return await Promise.race([bench.run(new Budget(bench.budgetMs), shared), backstop]);
  } catch (err) {
    return placeholder((err as Error).stack ?? String(err));
  } finally {
    clearTimeout(timer);
  }
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const wanted = quick ? BENCHES.filter((b) => b.long !== true).map((b) => b.id) : args;
  const unknown = wanted.filter((w) => !BENCHES.some((b) => b.id === w));
  if (unknown.length > 0) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}; known: ${BENCHES.map((b) => b.id).join(', ')}\n`);
    return 64;
  }
  const selected = wanted.length === 0 ? BENCHES : BENCHES.filter((b) => wanted.includes(b.id));
  const started = performance.now();
  const loadStart = os.loadavg().map((l) => Math.round(l * 100) / 100);
  const machine = machineInfo();
  process.stdout.write(
    `qrvend benchmarks on ${machine.cpus} x ${machine.cpuModel}, Node ${machine.node}, scratch disk ` +
      `${machine.scratchDisk}\n`,
  );

  let gateway: Promise<GatewayProcess> | null = null;
  const shared: Shared = { gateway: () => (gateway ??= GatewayProcess.start()) };
  const figures: Figure[] = [];
  try {
    for (const bench of selected) {
      const t0 = performance.now();
      process.stdout.write(`- ${bench.id} (budget ${bench.budgetMs / 1000} s) ... `);
      const out = await runOne(bench, shared);
      figures.push(...out);
      process.stdout.write(`${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    }
  } finally {
    if (gateway !== null) await (await (gateway as Promise<GatewayProcess>).catch(() => null))?.stop();
  }

  const file = join(REPO_ROOT, 'bench', wanted.length === 0 ? 'results.json' : 'results.partial.json');
  const results = {
    generatedAt: new Date().toISOString(),
    command:
      wanted.length === 0
        ? 'npm run bench'
        : quick
          ? 'npm run bench -- --quick'
          : `node dist/bench/run.js ${wanted.join(' ')}`,
    durationS: Math.round((performance.now() - started) / 100) / 10,
    machine,
    loadAverage: { start: loadStart, end: os.loadavg().map((l) => Math.round(l * 100) / 100) },
    figures,
  };
  writeResults(file, results);
  // Only a full run may replace the figures recorded in BENCHMARKS.md.
  const md = join(REPO_ROOT, 'BENCHMARKS.md');
  const mdUpdated =
    wanted.length === 0 &&
    updateBenchmarksMd(
      md,
      results,
      (p) => readFileSync(p, 'utf8'),
      (p, t) => writeFileSync(p, t),
    );
  process.stdout.write(
    `\n${formatTable(figures)}\n\nwritten ${file}${mdUpdated ? ` and the figures in ${md}` : ''} in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  return figures.some((f) => f.status === 'error') ? 1 : 0;
}

// Exit explicitly: a benchmark stopped by its backstop may leave handles behind.
main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
