/**
 * Where the fleet link reaches the vend path, counted rather than timed (docs/decisions/smallest-boards.md item 4): a
 * busy
 * machine changes latencies, not how many messages, timers and wake-ups a vend costs.
 *
 * `node dist/bench/thread-tally.js [vends]` runs the bench's rig (DaemonRig: the daemon through the
 * launcher, a pty, the gateway in its own process) three ways: fleet link off, on (broker
 * answering, in its own process), on with the broker stalled. The daemon is started with
 * support/thread-tally.cjs preloaded in every thread; around `vends` vends it dumps each thread's
 * counts, and this prints, per vend and per thread: messages posted (by type), async resources
 * created (by type), CPU time and context switches. Then the same for the bench's own process with
 * the two ways the vend benchmarks have read the VMC end of the pty (serialport, as rigs/rig.ts
 * does; a tty stream on the event loop, as support/vmc.ts does), against pty-echo.
 * A diagnostic: not part of `npm run bench`, no target.
 */
import { createHook } from 'node:async_hooks';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Budget, sleep, waitFor } from './support/budget.js';
import { BrokerProcess } from './support/broker.js';
import { GatewayProcess } from './support/gateway.js';
import { REPO_ROOT } from './support/machine.js';
import { DaemonRig } from './support/rig.js';
import { attachVmc, openStaticSession, runVends } from './support/vmc.js';
import { EchoFloor } from './pty-floor.js';
import { VmcSimulator } from '../src/sim/vmc/index.js';
import { openSerialLink } from '../src/mdb/transport/index.js';

interface Tally {
  threadId: number;
  role: string;
  tid: number;
  runNs: number;
  waitNs: number;
  voluntarySwitches: number;
  involuntarySwitches: number;
  posts: Record<string, number>;
  resources: Record<string, number>;
}

const VENDS = Number(process.argv[2] ?? 500);
const GAP_MS = 5;

async function dump(pid: number, dir: string): Promise<Map<number, Tally>> {
  for (const f of readdirSync(dir)) rmSync(join(dir, f));
  process.kill(pid, 'SIGUSR2');
  await waitFor(() => readdirSync(dir).length >= 2, 5000, 20);
  await sleep(200); // the last thread's file
  const out = new Map<number, Tally>();
  for (const f of readdirSync(dir)) {
    const t = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Tally;
    out.set(t.threadId, t);
  }
  return out;
}

function perVend(before: Record<string, number>, after: Record<string, number>, n: number): string {
  return Object.keys(after)
    .map((k) => [k, (after[k]! - (before[k] ?? 0)) / n] as const)
    .filter(([, v]) => v >= 0.005)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');
}

function report(label: string, a: Map<number, Tally>, b: Map<number, Tally>, n: number): void {
  process.stdout.write(`\n## ${label}: per vend, over ${n} vends ${GAP_MS} ms apart\n`);
  for (const [id, t1] of [...b].sort((x, y) => x[0] - y[0])) {
    const t0 = a.get(id);
    if (t0 === undefined) continue;
    process.stdout.write(
      `- ${t1.role} (thread ${id}): CPU ${((t1.runNs - t0.runNs) / n / 1000).toFixed(1)} ` +
        `us, run-queue wait ${((t1.waitNs - t0.waitNs) / n / 1000).toFixed(1)} us, ` +
        `wake-ups ${((t1.voluntarySwitches - t0.voluntarySwitches) / n).toFixed(2)}, ` +
        `preempted ${((t1.involuntarySwitches - t0.involuntarySwitches) / n).toFixed(2)}\n` +
        `  posted: ${perVend(t0.posts, t1.posts, n) || 'nothing'}\n  async ` +
        `resources: ${perVend(t0.resources, t1.resources, n) || 'none'}\n`,
    );
  }
}

async function daemonRun(gateway: GatewayProcess, fleet: 'off' | 'on' | 'stalled'): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-tally-'));
  const broker = fleet === 'off' ? null : await BrokerProcess.start();
  let rig: DaemonRig | null = null;
  try {
    rig = await DaemonRig.start({
      gatewayUrl: gateway.url,
      preauthAmount: 100_000,
      watchLogs: ['fleet link connected'],
      extraEnv: () => ({ QRVEND_TALLY_DIR: dir }),
      patch: (c, scratch) => {
        if (broker !== null)
          c.fleet = {
            url: broker.gateUrl,
            protocolVersion: 4,
            machineId: 'BENCH-FLEET-1',
            healthIntervalS: 5,
            keepaliveS: 5,
            configOverlay: join(scratch, 'state', 'fleet-config.json'),
          };
      },
    });
    if (broker !== null) {
      const connected = rig.daemon.watch('fleet link connected');
      if (!(await waitFor(() => connected.seen() > 0, 15_000, 50))) throw new Error('the fleet link did not connect');
    }
    await openStaticSession(rig.sim, rig.files, 30_000);
    const budget = new Budget(600_000);
    await runVends(rig.sim, 100, { price: 1, gapMs: GAP_MS, budget });
    if (broker !== null && fleet === 'stalled') {
      await broker.setMode('stalled');
      await sleep(1000);
    }
    const a = await dump(rig.daemon.pid, dir);
    await runVends(rig.sim, VENDS, { price: 1, gapMs: GAP_MS, budget });
    const b = await dump(rig.daemon.pid, dir);
    report(`daemon, fleet link ${fleet}`, a, b, VENDS);
  } finally {
    await rig?.stop();
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bench process's own cost per vend against pty-echo, with the VMC end read one way or the other. */
async function linkRun(kind: 'serialport' | 'tty'): Promise<void> {
  const attach =
    kind === 'tty'
      ? attachVmc
      : async (path: string) =>
          new VmcSimulator({
            link: await openSerialLink({ path, baudRate: 115200 }),
            vendPolicy: 'manual',
            autoEnable: true,
            pollIntervalMs: 100,
            seed: 1,
            keepCommands: 100,
          });
  const floor = await EchoFloor.start(1_000_000, attach);
  const counts: Record<string, number> = {};
  const hook = createHook({ init: (_id, type) => void (counts[type] = (counts[type] ?? 0) + 1) });
  try {
    const budget = new Budget(600_000);
    await runVends(floor.sim, 100, { price: 1, gapMs: GAP_MS, budget });
    const before = { ...counts };
    hook.enable();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const run = await runVends(floor.sim, VENDS, { price: 1, gapMs: GAP_MS, budget });
    const cpu = process.cpuUsage(cpu0);
    hook.disable();
    const sorted = run.latencies.sort((x, y) => x - y);
    process.stdout.write(
      `\n## bench process, VMC end read by ${kind}, against pty-echo: per vend over ${VENDS}\n` +
        `- CPU ${((cpu.user + cpu.system) / VENDS).toFixed(1)} us (whole ` +
        `process), async resources: ${perVend(before, counts, VENDS)}\n` +
        `- latency p50 ${sorted[Math.floor(VENDS / 2)]!.toFixed(3)} ms (for ` +
        `orientation only; ${((performance.now() - t0) / 1000).toFixed(1)} s)\n`,
    );
  } finally {
    hook.disable();
    await floor.stop();
  }
}

process.env.QRVEND_BENCH_DAEMON_NODE_ARGS = `--require ${join(REPO_ROOT, 'bench', 'support', 'thread-tally.cjs')}`;
const gateway = await GatewayProcess.start();
try {
  for (const fleet of ['off', 'on', 'stalled'] as const) await daemonRun(gateway, fleet);
  for (const kind of ['serialport', 'tty'] as const) await linkRun(kind);
} finally {
  await gateway.stop();
}
process.exit(0);
