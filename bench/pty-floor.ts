/**
 * Reference figure, no target: vend approval latency against pty-echo (a reader that approves at
 * once, in its own process) instead of the daemon. Whatever the vend figures show above this floor
 * is the daemon's; the floor itself is the cost of the measurement path on this machine.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createPtyPair } from '../test/support/pty.js';
import { measured, notMeasured, type Figure } from './figure.js';
import { Budget } from './support/budget.js';
import { cpuWindow } from './support/cpu.js';
import { attachVmc, nextCommand, runVends } from './support/vmc.js';
import { summarize } from './stats.js';

const BASE = { id: 'vend-latency-floor', what: 'Reference: the same vend over the pty against an instant-approving reader (measurement floor)', unit: 'ms', target: { text: 'reference (no target)', checks: [] } };

export async function benchPtyFloor(budget: Budget, vends = 2000, gapMs = 5): Promise<Figure[]> {
  const pty = await createPtyPair();
  const sim = await attachVmc(pty.vmcPath);
  const child = fork(fileURLToPath(new URL('./support/pty-echo.js', import.meta.url)), [pty.agentPath], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`pty-echo exited with ${code}`)));
    });
    const enabled = await waitEnabled(sim, 5000);
    if (!enabled) throw new Error('the VMC simulator did not enable its reader');
    const started = nextCommand(sim, (c) => c.kind === 'start', 5000, 'C,START');
    child.send({ type: 'start', funds: 1_000_000 });
    await started;
    await runVends(sim, 50, { price: 1, gapMs, budget });
    const window = cpuWindow(child.pid!);
    const run = await runVends(sim, vends, { price: 1, gapMs, budget });
    const cpu = window.end();
    return [measured({ ...BASE, context: { vendGapMs: gapMs, ...renameDaemon(cpu) } }, { samples: run.latencies.length, summary: summarize(run.latencies) })];
  } catch (err) {
    return [notMeasured(BASE, 'error', (err as Error).message)];
  } finally {
    child.kill('SIGTERM');
    await sim.close();
    await pty.close();
  }
}

async function waitEnabled(sim: Awaited<ReturnType<typeof attachVmc>>, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (sim.state().reader === 'enabled') return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

/** The CPU window names its thread "daemon"; here it is the echo reader's. */
function renameDaemon(cpu: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k.replace('daemonMainThread', 'echoReaderMainThread'), v]));
}
