/**
 * Scheduling priority of the daemon's main thread (the machine loop).
 *
 * The vend approval and the event-loop delay targets are set by how long the main thread waits
 * for a CPU, not by the CPU it uses: every vend wakes several threads at once (the payment worker
 * writing its ledger records, the serial line's other side, other processes), and on 2 or 4 cores
 * the machine loop queues behind them. A lower nice value makes the kernel's scheduler pick it
 * first; measured in BENCHMARKS.md.
 *
 * On Linux, setpriority(PRIO_PROCESS, 0, n) - os.setPriority(0, n) - changes the calling thread
 * only, and a thread inherits its creator's value when it is created. So this is called after the
 * worker threads are started: they keep the normal priority, only the machine loop is raised.
 * Raising needs CAP_SYS_NICE or an RLIMIT_NICE that allows it (the systemd unit sets
 * LimitNICE=-10); without either it fails and the daemon carries on at the normal priority.
 */
import os from 'node:os';
import type { Logger } from '../core/log.js';

/** The machine loop's nice value: well ahead of the workers (0) and of ordinary processes. */
export const MAIN_THREAD_NICE = -10;

export type PriorityResult = { raised: true; nice: number } | { raised: false; nice: number; reason: string };

/** Raises the calling thread to `nice` (never lowers it); one log line says what happened. */
export function raiseThisThread(log: Logger, nice = MAIN_THREAD_NICE): PriorityResult {
  const before = safeGetPriority();
  if (before !== null && before <= nice) return { raised: true, nice: before };
  try {
    os.setPriority(0, nice);
    log.info({ nice, was: before }, 'machine loop thread priority raised');
    return { raised: true, nice };
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    log.info(
      { nice: before, wanted: nice, reason },
      'machine loop thread runs at normal priority (raising it needs LimitNICE=-10 or CAP_SYS_NICE; the systemd unit ' +
        'grants LimitNICE); vends may wait longer for a CPU on a busy machine',
    );
    return { raised: false, nice: before ?? 0, reason };
  }
}

function safeGetPriority(): number | null {
  try {
    return os.getPriority(0);
  } catch {
    return null;
  }
}
