/**
 * The agent's resident memory on the emulated board (docs/decisions/smallest-boards.md item 3): 100 Static QR sales,
 * then
 * the daemon's RSS (all threads) once it has rested, beside a bare-Node floor started in the guest
 * the way the launcher starts `qrvend run` (its heap flags, MALLOC_ARENA_MAX=2) with as many idle
 * worker threads as the agent runs. The bench (`npm run bench -- memory`) judges the ratio on
 * this host; this step gives the figure on the emulated arm64/armhf system, where the binary, the
 * page size and the allocator are the board's.
 */
import { MAIN_THREAD_NODE_FLAGS, PAYMENT_WORKER_LIMITS } from '../../src/daemon/heap-limits.js';
import { q, type Guest } from './ssh.js';

export interface RssSample {
  /** Sales done when the sample was taken. */
  sales: number;
  rssMb: number;
  anonMb: number;
}

export interface RssFacts {
  samples: RssSample[];
  /** After the last sale and the rest (the quiet collections have run): the figure. */
  steadyMb: number;
  floorMb: number;
  floorWorkers: number;
  ratio: number;
  salesSeconds: number;
  /** rssByMapping's table after the rest (written to memory-by-mapping.txt by the caller). */
  byMapping: string;
  /** Each thread's V8 heap from the agent's last stats line (lastStatsHeaps), null when none was found. */
  heapsMb: ThreadHeaps | null;
}

/** Per thread (main, payment, display, fleet): MB used / committed, null for a worker that is off. */
export type ThreadHeaps = Record<string, { usedMb: number; committedMb: number } | null>;

/**
 * The threads' heaps from the agent's last `stats` line in the journal (one a minute; the display
 * and fleet workers' figures are the ones they answered for the line before). What the RSS is made
 * of beside the mappings: which isolate holds what.
 */
export async function lastStatsHeaps(g: Guest): Promise<ThreadHeaps | null> {
  const line = (
    await g.sh(`journalctl -u qrvend -o cat --no-pager | grep '"msg":"stats"' | tail -n 1`, 30_000, true)
  ).stdout.trim();
  try {
    const memory = (JSON.parse(line) as { stats?: { memory?: Record<string, unknown> } }).stats?.memory;
    if (memory === undefined) return null;
    const mb = (bytes: unknown) => Math.round(Number(bytes) / 104_857.6) / 10;
    const heaps: ThreadHeaps = {};
    for (const [thread, heap] of Object.entries(memory)) {
      if (heap === null) heaps[thread] = null;
      else if (typeof heap === 'object') {
        const h = heap as { heapUsedBytes?: unknown; heapTotalBytes?: unknown };
        heaps[thread] = { usedMb: mb(h.heapUsedBytes), committedMb: mb(h.heapTotalBytes) };
      }
    }
    return heaps;
  } catch {
    return null;
  }
}

/** VmRSS and the anonymous part of the unit's main process (smaps_rollup), in MB. */
export async function daemonRss(g: Guest): Promise<{ rssMb: number; anonMb: number }> {
  const out = (
    await g.sh(
      `pid=$(systemctl show -p MainPID --value qrvend) && grep -E '^(Rss|Anonymous):' /proc/$pid/smaps_rollup`,
      20_000,
    )
  ).stdout;
  return { rssMb: kbOf(out, 'Rss'), anonMb: kbOf(out, 'Anonymous') };
}

/**
 * Where the agent's RSS is, by mapping (/proc/<pid>/smaps: file-backed by path, anonymous as
 * [anon], heap, stack), largest first, in kB: the line the figure is explained by.
 */
export async function rssByMapping(g: Guest, top = 25): Promise<string> {
  const awk =
    `/^[0-9a-f]+-[0-9a-f]+ / { name = ($6 == "") ? "[anon]" : $6 } /^Rss:/ { rss[name] += $2 } END { for ` +
    `(n in rss) if (rss[n] > 0) printf "%8d kB  %s\\n", rss[n], n }`;
  return (
    await g.sh(
      `pid=$(systemctl show -p MainPID --value qrvend) && awk ${q(awk)} /proc/$pid/smaps | sort -rn | head -n ${top}`,
      30_000,
    )
  ).stdout;
}

/**
 * Bare Node with `workers` idle worker threads (the payment worker's heap caps), started as the
 * launcher starts the daemon, with the release's own node binary; its RSS once it has idled 5 s.
 */
export async function floorRss(g: Guest, workers: number): Promise<number> {
  // The launcher's flags and the workers' limits, as the daemon and the bench's floor
  // (bench/support/memory-floor.ts) get them (a unit test keeps the flags equal to qrvend-wrapper.sh's).
  const script = [
    "const { Worker } = require('node:worker_threads');",
    "const idle = \"require('node:worker_threads').parentPort.on('message', () => {});\";",
    `for (let i = 0; i < ${workers}; i++) new Worker(idle, { eval: true, resourceLimits: ` +
      `${JSON.stringify(PAYMENT_WORKER_LIMITS)} });`,
    "setTimeout(() => { process.stdout.write(require('node:fs').readFileSync('/proc/self/smaps_rollup', 'utf8')); " +
      'process.exit(0); }, 5000);',
  ].join(' ');
  const out = (
    await g.sh(
      `MALLOC_ARENA_MAX=2 /opt/qrvend/current/node/bin/node ${MAIN_THREAD_NODE_FLAGS.join(' ')} -e "$(cat)"`,
      120_000,
      false,
      script,
    )
  ).stdout;
  return kbOf(out, 'Rss');
}

/**
 * Runs `sales` sales through `sale` (one whole sale each, closed at the VMC), sampling the agent's
 * RSS every `every` sales; then lets the agent rest `restMs` and takes the steady figure.
 */
export async function rssAfterSales(opts: {
  guest: Guest;
  sale: (n: number) => Promise<void>;
  sales: number;
  every: number;
  restMs: number;
  floorWorkers: number;
}): Promise<RssFacts> {
  const samples: RssSample[] = [{ sales: 0, ...(await daemonRss(opts.guest)) }];
  const t0 = performance.now();
  for (let n = 1; n <= opts.sales; n++) {
    await opts.sale(n);
    if (n % opts.every === 0) samples.push({ sales: n, ...(await daemonRss(opts.guest)) });
  }
  const salesSeconds = Math.round((performance.now() - t0) / 100) / 10;
  await new Promise((r) => setTimeout(r, opts.restMs));
  const steady = await daemonRss(opts.guest);
  samples.push({ sales: opts.sales, ...steady });
  const byMapping = await rssByMapping(opts.guest);
  const heapsMb = await lastStatsHeaps(opts.guest);
  const floorMb = await floorRss(opts.guest, opts.floorWorkers);
  return {
    samples,
    steadyMb: steady.rssMb,
    floorMb,
    floorWorkers: opts.floorWorkers,
    ratio: Math.round((steady.rssMb / floorMb) * 100) / 100,
    salesSeconds,
    byMapping,
    heapsMb,
  };
}

function kbOf(text: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  if (!m) throw new Error(`no ${field} in /proc/<pid>/smaps_rollup: ${text.slice(0, 200)}`);
  return Math.round(Number(m[1]) / 102.4) / 10;
}
