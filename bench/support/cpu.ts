/**
 * CPU accounting around a measurement window, to tell the daemon's own slowness from waiting for a
 * CPU: how long the daemon's main thread sat runnable on the run queue (/proc/<pid>/task/<pid>/schedstat),
 * and how busy the machine was, steal included (/proc/stat; this may be a VM whose host takes time).
 */
import { readFileSync } from 'node:fs';
import { threadSwitches, threadsRunNs } from './proc.js';

interface CpuTimes {
  busy: number;
  idle: number;
  steal: number;
  total: number;
}

function machineTimes(): CpuTimes {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number) as number[];
  const idleAll = idle! + iowait!;
  const busy = user! + nice! + system! + irq! + softirq!;
  return { busy, idle: idleAll, steal: steal!, total: busy + idleAll + steal! };
}

/** [ns on CPU, ns waiting on the run queue] of one thread. */
function threadSched(pid: number, tid: number): [number, number] {
  const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
  return [run!, wait!];
}

export interface CpuWindow {
  /** Ends the window and returns what happened in it. */
  end(): Record<string, number>;
}

/** Starts a window for the daemon `pid` (its main thread has tid = pid). */
export function cpuWindow(pid: number): CpuWindow {
  const m0 = machineTimes();
  const [run0, wait0] = threadSched(pid, pid);
  const all0 = threadsRunNs(pid);
  const switches0 = threadSwitches(pid);
  const t0 = Date.now();
  return {
    end() {
      const m1 = machineTimes();
      const [run1, wait1] = threadSched(pid, pid);
      const all1 = threadsRunNs(pid);
      const switches1 = threadSwitches(pid);
      const total = m1.total - m0.total || 1;
      return {
        // Every thread of the daemon (workers, V8's and libuv's helpers), and how often they slept
        // and were woken: what the daemon costs the machine, whoever waits for it.
        daemonAllThreadsCpuMs: Math.round((all1 - all0) / 1e6),
        daemonWakeups: switches1.voluntary - switches0.voluntary,
        windowS: Math.round((Date.now() - t0) / 100) / 10,
        machineCpuBusyPct: Math.round(((m1.busy - m0.busy) / total) * 1000) / 10,
        machineCpuStealPct: Math.round(((m1.steal - m0.steal) / total) * 1000) / 10,
        daemonMainThreadCpuMs: Math.round((run1 - run0) / 1e6),
        daemonMainThreadRunQueueWaitMs: Math.round((wait1 - wait0) / 1e6),
      };
    },
  };
}
