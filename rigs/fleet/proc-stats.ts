/**
 * CPU and memory of another process from /proc (Linux): the broker's cost in the fleet
 * simulation. Pure parsers plus one read each; USER_HZ is 100 on every Linux architecture qrvend
 * targets (the kernel's ABI for /proc/<pid>/stat).
 */
import { readFileSync } from 'node:fs';

const USER_HZ = 100;

/** utime + stime of /proc/<pid>/stat, in ms. The command name (field 2) may hold spaces and parentheses. */
export function parseCpuMs(stat: string): number {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state); utime and stime are fields 14 and 15.
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error('unreadable /proc/<pid>/stat');
  return ((utime + stime) * 1000) / USER_HZ;
}

/** VmRSS and VmHWM of /proc/<pid>/status, in KiB. */
export function parseMemoryKiB(status: string): { rssKiB: number; hwmKiB: number } {
  const field = (name: string) => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status);
    return m ? Number(m[1]) : NaN;
  };
  return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
}

export function processCpuMs(pid: number): number {
  return parseCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

export function processMemoryKiB(pid: number): { rssKiB: number; hwmKiB: number } {
  return parseMemoryKiB(readFileSync(`/proc/${pid}/status`, 'utf8'));
}

/** Nearest-rank percentile of unsorted values (NaN when empty). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}
