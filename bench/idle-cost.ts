/**
 * Idle cost (docs/decisions/targets.md: CPU while idle <= 0.5 % of one core). The daemon with its reader
 * enabled and no consumer, the board sending its idle lines (the VMC simulator's `r,ACK` every
 * 100 ms, as a polling VMC makes the board report), production logging (a stats line a minute).
 * Over WINDOW_S seconds: utime + stime of the whole process from /proc/<pid>/stat, and the
 * wake-ups per second as context switches (voluntary + involuntary) summed over every thread in
 * /proc/<pid>/task (each time a thread is scheduled in after sleeping is one wake-up; no strace needed).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { measured, notMeasured, DAEMON_PENDING, type Figure } from './figure.js';
import { Budget, sleep } from './support/budget.js';
import { daemonBuilt } from './support/daemon.js';
import type { GatewayProcess } from './support/gateway.js';
import { cpuTicks, parseCtxtSwitches, threadSwitches, threadsRunNs, USER_HZ } from './support/proc.js';
import { DaemonRig } from './support/rig.js';
import { round } from './stats.js';

export const WINDOW_S = 60;
/** Start-up is not idle: V8 shrinks the heaps (memory reducer) in the first seconds after start. */
const SETTLE_MS = 15_000;

const BASE = {
  id: 'idle-cpu',
  what: `Daemon CPU while idle over ${WINDOW_S} s (reader enabled, board polling r,ACK every 100 ms), all threads`,
  unit: '% of one core',
  target: { text: '<= 0.5 % of one core', checks: [{ stat: 'value' as const, op: '<=' as const, limit: 0.5 }] },
};

/** Context switches per thread name (comm), to say which threads wake up. */
function switchesByThread(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      // Node names every thread "node": the main thread (tid = pid) is told apart, the rest by tid.
      const name = tid === String(pid) ? 'main' : `tid ${tid}`;
      const s = parseCtxtSwitches(status);
      out.set(name, (out.get(name) ?? 0) + s.voluntary + s.nonvoluntary);
    } catch {
      // the thread ended
    }
  }
  return out;
}

export async function benchIdleCost(budget: Budget, gateway: GatewayProcess, windowS = WINDOW_S): Promise<Figure[]> {
  if (!daemonBuilt()) return [notMeasured(BASE, 'pending', DAEMON_PENDING)];
  const rig = await DaemonRig.start({
    gatewayUrl: gateway.url,
    preauthAmount: 10,
    patch: (c) => (c.log = { level: 'info', statsIntervalMs: 60_000, loopDelayResolutionMs: 100 }),
  });
  try {
    await sleep(Math.min(SETTLE_MS, budget.leftMs / 4));
    const pid = rig.daemon.pid;
    const t0 = performance.now();
    const ticks0 = cpuTicks(pid);
    const ns0 = threadsRunNs(pid);
    const sw0 = threadSwitches(pid);
    const byThread0 = switchesByThread(pid);
    const log0 = rig.daemon.stdoutBytes;
    await sleep(Math.min(windowS * 1000, Math.max(1000, budget.leftMs - 5000)));
    const seconds = (performance.now() - t0) / 1000;
    const ticks = cpuTicks(pid) - ticks0;
    const schedPct = ((threadsRunNs(pid) - ns0) / 1e9 / seconds) * 100;
    const sw1 = threadSwitches(pid);
    const byThread1 = switchesByThread(pid);
    const cpuPct = (ticks / USER_HZ / seconds) * 100;
    const wakeups = (sw1.voluntary + sw1.nonvoluntary - sw0.voluntary - sw0.nonvoluntary) / seconds;
    const threads = [...byThread1]
      .map(([name, n]) => [name, (n - (byThread0.get(name) ?? 0)) / seconds] as const)
      .filter(([, rate]) => rate >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .map(([name, rate]) => `${name} ${round(rate, 1)}`);
    const context = {
      windowS: round(seconds, 1),
      cpuTicks: ticks,
      // The same from /proc/<pid>/task/*/schedstat, in ns rather than 10 ms ticks.
      schedstatCpuPct: round(schedPct, 3),
      userHz: USER_HZ,
      wakeupsPerSecond: round(wakeups, 1),
      wakeupMethod: 'context switches (voluntary + involuntary) over every thread, /proc/<pid>/task/*/status',
      threads: sw1.threads,
      wakeupsPerSecondByThread: threads.join(', '),
      boardLinesPerSecond: 10,
      logBytesPerMinute: round(((rig.daemon.stdoutBytes - log0) / seconds) * 60, 0),
    };
    const detail =
      `${round(wakeups, 1)} wake-ups/s over ${sw1.threads} threads (${threads.slice(0, 4).join(', ')}); ` +
      `CPU ticks of 10 ms, ${ticks} in ${round(seconds, 0)} s (schedstat: ${round(schedPct, 2)} %)`;
    return [measured({ ...BASE, context, detail }, { samples: 1, value: cpuPct })];
  } catch (err) {
    return [notMeasured(BASE, 'error', (err as Error).message)];
  } finally {
    await rig.stop();
  }
}
