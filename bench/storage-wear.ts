/**
 * SD-card wear (docs/decisions/targets.md: bytes written to storage per sale <= 64 KiB, about 250 KiB in
 * the first release). The real daemon's /proc/<pid>/io write_bytes (bytes it caused to be sent to
 * the storage layer: page-cache pages it dirtied, the -shm mapping included) around whole sales:
 *
 * - static: a wallet Start, Authorization, two vends, session end, the Settlement delivered and
 *   its delivery recorded (value = bytes / sale over one WAL checkpoint cycle, so the checkpoint
 *   is counted in its share);
 * - dynamic: a vend request on an always-idle VMC, GenerateQR, Inquiry paid at once, vended.
 *
 * The fail-io shim (test/native/fail-io.c) is preloaded in counting mode: fsync/fdatasync calls
 * and the bytes handed to write() per file (ledger, -wal) tell where the bytes go. Its tally file
 * lives on tmpfs (/dev/shm), so it adds nothing to write_bytes. The daemon's stdout (its log lines,
 * which journald would store) is counted beside.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { measured, notMeasured, DAEMON_PENDING, type Figure } from './figure.js';
import { Budget, sleep, waitFor } from './support/budget.js';
import { daemonBuilt } from './support/daemon.js';
import type { GatewayProcess } from './support/gateway.js';
import { FAIL_IO_SHIM, parseTally } from './support/io-tally.js';
import { writeBytes } from './support/proc.js';
import { DaemonRig } from './support/rig.js';
import { endSession, nextCommand, openStaticSession, vendOnce } from './support/vmc.js';
import { round, summarize } from './stats.js';

/**
 * Static: the window runs from just after one WAL checkpoint to just after the next (about 110
 * sales at 4,000 frames since schema 5, src/ledger/db.ts; 55 before), so the checkpoint's share is
 * in the mean exactly once; at most MAX_CYCLE_SALES each for finding the first checkpoint and for
 * the cycle.
 * Dynamic: DYNAMIC_SALES sales (a cycle would be ~110 sales); its figure leaves the checkpoint out.
 */
const MAX_CYCLE_SALES = 160;
const DYNAMIC_SALES = 30;
const WARM_UP_SALES = 2;
/** After the last gateway request of a sale: time for the daemon to record the outcome. */
const SETTLE_MS = 400;
const KiB = 1024;

const STATIC = {
  id: 'storage-per-sale-static',
  what: 'Bytes written to storage per static QR sale (Start, two vends, settled; /proc/<pid>/io write_bytes)',
  unit: 'KiB',
  target: { text: '<= 64 KiB per sale', checks: [{ stat: 'value' as const, op: '<=' as const, limit: 64 }] },
};
const DYNAMIC = {
  id: 'storage-per-sale-dynamic',
  what: 'Bytes written to storage per dynamic QR sale (GenerateQR, paid at the first Inquiry, vended)',
  unit: 'KiB',
  target: {
    text: '<= 64 KiB per sale (the static target, applied to a dynamic sale)',
    checks: [{ stat: 'value' as const, op: '<=' as const, limit: 64 }],
  },
};

function tallyDir(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : '/tmp';
}

interface Sales {
  perSaleKiB: number[];
  totalBytes: number;
  logBytes: number;
  tally: ReturnType<typeof parseTally> | null;
}

/** Checkpoints so far: each one syncs the ledger file itself (commits sync only the -wal). */
function checkpointsIn(tallyFile: string): number {
  return existsSync(tallyFile) ? (parseTally(readFileSync(tallyFile, 'utf8')).syncsByFile['ledger.sqlite'] ?? 0) : 0;
}

async function measureSales(
  rig: DaemonRig,
  tallyFile: string,
  budget: Budget,
  sale: () => Promise<void>,
  cycle: boolean,
): Promise<Sales> {
  for (let i = 0; i < WARM_UP_SALES; i++) await sale();
  if (cycle && existsSync(FAIL_IO_SHIM)) {
    // Up to the first checkpoint after start (migrations and the warm-up may already have had one).
    const seen = checkpointsIn(tallyFile);
    for (let i = 0; i < MAX_CYCLE_SALES && checkpointsIn(tallyFile) === seen && !budget.spent; i++) await sale();
  }
  rmSync(tallyFile, { force: true });
  const perSale: number[] = [];
  const start = writeBytes(rig.daemon.pid);
  const log0 = rig.daemon.stdoutBytes;
  const wanted = cycle ? MAX_CYCLE_SALES : DYNAMIC_SALES;
  for (let i = 0; i < wanted && !budget.spent; i++) {
    const before = writeBytes(rig.daemon.pid);
    await sale();
    perSale.push((writeBytes(rig.daemon.pid) - before) / KiB);
    if (cycle && checkpointsIn(tallyFile) > 0) break;
  }
  const tally = existsSync(tallyFile) ? parseTally(readFileSync(tallyFile, 'utf8')) : null;
  return {
    perSaleKiB: perSale,
    totalBytes: writeBytes(rig.daemon.pid) - start,
    logBytes: rig.daemon.stdoutBytes - log0,
    tally,
  };
}

function figureOf(base: typeof STATIC, s: Sales, extra: Figure['context']): Figure {
  const n = s.perSaleKiB.length;
  const sum = summarize(s.perSaleKiB);
  const perSale = (x: number) => round(x / n, 1);
  const files = s.tally ? Object.entries(s.tally.bytesByFile).map(([f, b]) => `${f} ${round(b / n / KiB, 1)} KiB`) : [];
  const fsyncs = s.tally ? perSale(s.tally.syncs) : null;
  const context: Figure['context'] = {
    sales: n,
    perSaleP50KiB: round(sum.p50, 1),
    perSaleMaxKiB: round(sum.max, 1),
    fsyncsPerSale: fsyncs,
    writeCallsPerSale: s.tally ? perSale(s.tally.writes) : null,
    bytesHandedToWritePerSale: files.join(', '),
    logBytesPerSale: perSale(s.logBytes),
    // Each checkpoint syncs the ledger file: its share of the bytes is in the figure only if one fell in the window.
    checkpointsInWindow: s.tally ? (s.tally.syncsByFile['ledger.sqlite'] ?? 0) : null,
    ...(s.tally ? {} : { tally: 'fail-io shim without counting mode: run `node native/build.mjs`' }),
    ...extra,
  };
  const checkpoints = s.tally ? (s.tally.syncsByFile['ledger.sqlite'] ?? 0) : null;
  const detail =
    `${checkpoints ?? '?'} WAL checkpoint(s) in the window; ${fsyncs ?? '?'} fsyncs/sale; ` +
    `write() per sale: ${files.join(', ') || 'n/a'}; log ${round(s.logBytes / n / KiB, 1)} ` +
    `KiB/sale on stdout; p50/max ${round(sum.p50, 1)}/${round(sum.max, 1)} KiB over ${n} sales`;
  return measured({ ...base, context, detail }, { samples: n, value: s.totalBytes / n / KiB });
}

async function withRig<T>(
  gateway: GatewayProcess,
  tallyFile: string,
  alwaysIdle: boolean,
  run: (rig: DaemonRig) => Promise<T>,
): Promise<T> {
  const rig = await DaemonRig.start({
    gatewayUrl: gateway.url,
    preauthAmount: 20,
    patch: (c) => {
      c.mdb!.alwaysIdle = alwaysIdle;
      c.dynamicQr = { pollIntervalMs: 100 };
      // Production logging: one stats line a minute is the default; the bench's 1 s would count as wear.
      c.log = { level: 'info', statsIntervalMs: 60_000, loopDelayResolutionMs: 100 };
      // QRVEND_BENCH_FLEET_URL: the same sales with the fleet link on (its events share the ledger's commits).
      const fleetUrl = process.env.QRVEND_BENCH_FLEET_URL;
      if (fleetUrl) c.fleet = { url: fleetUrl, protocolVersion: 5, machineId: 'BENCH-WEAR-1' };
    },
    extraEnv: existsSync(FAIL_IO_SHIM)
      ? (dir) => ({ LD_PRELOAD: FAIL_IO_SHIM, QRVEND_FAILIO_DIR: dir, QRVEND_FAILIO_TALLY: tallyFile })
      : () => ({}),
  });
  try {
    return await run(rig);
  } finally {
    await rig.stop();
  }
}

export async function benchStorageWear(budget: Budget, gateway: GatewayProcess): Promise<Figure[]> {
  if (!daemonBuilt())
    return [notMeasured(STATIC, 'pending', DAEMON_PENDING), notMeasured(DYNAMIC, 'pending', DAEMON_PENDING)];
  const tallyFile = join(tallyDir(), `qrvend-bench-tally-${process.pid}`);
  const figures: Figure[] = [];
  try {
    const settled = async () => (await gateway.summary()).byState.settled ?? 0;
    const s = await withRig(gateway, tallyFile, false, async (rig) => {
      const sale = async () => {
        const before = await settled();
        await openStaticSession(rig.sim, rig.files, 15_000);
        await vendOnce(rig.sim, 11, 1.5);
        await vendOnce(rig.sim, 12, 2.5);
        endSession(rig.sim);
        if (!(await pollUntil(async () => (await settled()) > before, 15_000)))
          throw new Error('the Settlement did not reach the gateway within 15 s');
        await sleep(SETTLE_MS);
      };
      return measureSales(rig, tallyFile, budget.slice(budget.leftMs * 0.7), sale, true);
    });
    const static_ = figureOf(STATIC, s, {
      vendsPerSale: 2,
      window: 'one WAL checkpoint cycle (from just after one checkpoint to just after the next)',
    });
    // A window without its checkpoint leaves the checkpoint's share out: that is not the figure.
    if (s.tally && (s.tally.syncsByFile['ledger.sqlite'] ?? 0) === 0) {
      figures.push(
        notMeasured(
          { ...STATIC, context: static_.context },
          'error',
          `no WAL checkpoint in the window (the budget ran out after ` +
            `${s.perSaleKiB.length} sales): ${static_.detail ?? ''}`,
        ),
      );
    } else {
      figures.push(static_);
    }
  } catch (err) {
    figures.push(notMeasured(STATIC, 'error', (err as Error).message));
  }
  try {
    const d = await withRig(gateway, tallyFile, true, async (rig) => {
      let item = 0;
      // Always idle: the board reports the reader enabled once the VMC has set it up.
      if (!(await waitFor(() => rig.sim.state().reader === 'enabled', 10_000)))
        throw new Error(`the VMC did not enable the reader (state ${JSON.stringify(rig.sim.state())})`);
      const sale = async () => {
        const answer = nextCommand(
          rig.sim,
          (c) => c.kind === 'vend-approve' || c.kind === 'vend-deny',
          15_000,
          'answer to the dynamic QR vend request',
        );
        if (!rig.sim.select(1 + (item++ % 40), 1.2))
          throw new Error(`the VMC simulator could not select (state ${JSON.stringify(rig.sim.state())})`);
        const { command } = await answer;
        if (command.kind !== 'vend-approve') throw new Error('the dynamic QR vend was denied');
        rig.sim.vendSuccess();
        await sleep(SETTLE_MS);
        await waitFor(() => rig.sim.state().vend === 'none', 5000);
      };
      return measureSales(rig, tallyFile, budget, sale, false);
    });
    figures.push(
      figureOf(DYNAMIC, d, {
        window: `${DYNAMIC_SALES} sales, the WAL checkpoint's share left out unless one fell in`,
      }),
    );
  } catch (err) {
    figures.push(notMeasured(DYNAMIC, 'error', (err as Error).message));
  } finally {
    rmSync(tallyFile, { force: true });
  }
  return figures;
}

async function pollUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await sleep(50);
  }
  return false;
}
