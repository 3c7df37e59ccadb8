/**
 * What /proc says about a process, for the idle-cost and SD-card-wear figures: CPU time
 * (/proc/<pid>/stat utime + stime), context switches summed over every thread
 * (/proc/<pid>/task/<tid>/status), and bytes sent to storage (/proc/<pid>/io write_bytes).
 * The parsers are pure (text in, numbers out); the readers are thin.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcCpu {
  /** utime + stime, clock ticks (USER_HZ). */
  ticks: number;
}

/**
 * utime + stime from the text of /proc/<pid>/stat. The second field (comm) is in parentheses and
 * may itself hold spaces and parentheses, so fields are counted after the last ')'.
 */
export function parseStatTicks(text: string): number {
  const close = text.lastIndexOf(')');
  if (close < 0) throw new Error('not a /proc/<pid>/stat line: no ")" after the command name');
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  // rest[0] is field 3 (state): utime is field 14, stime field 15.
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isInteger(utime) || !Number.isInteger(stime))
    throw new Error('not a /proc/<pid>/stat line: utime/stime are not integers');
  return utime + stime;
}

/** voluntary + nonvoluntary context switches from the text of a /proc/.../status file. */
export function parseCtxtSwitches(text: string): { voluntary: number; nonvoluntary: number } {
  const v = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(text)?.[1];
  const n = /^nonvoluntary_ctxt_switches:\s+(\d+)$/m.exec(text)?.[1];
  if (v === undefined || n === undefined) throw new Error('no *_ctxt_switches lines in the status text');
  return { voluntary: Number(v), nonvoluntary: Number(n) };
}

/** One member (e.g. write_bytes) of the text of /proc/<pid>/io. */
export function parseIoField(text: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)$`, 'm').exec(text)?.[1];
  if (m === undefined) throw new Error(`no ${field} in the io text`);
  return Number(m);
}

export function cpuTicks(pid: number): number {
  return parseStatTicks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** Context switches summed over the threads alive now (a thread that ended takes its count with it). */
export function threadSwitches(pid: number): { voluntary: number; nonvoluntary: number; threads: number } {
  let voluntary = 0;
  let nonvoluntary = 0;
  let threads = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const s = parseCtxtSwitches(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'));
      voluntary += s.voluntary;
      nonvoluntary += s.nonvoluntary;
      threads += 1;
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return { voluntary, nonvoluntary, threads };
}

export function writeBytes(pid: number): number {
  return parseIoField(readFileSync(`/proc/${pid}/io`, 'utf8'), 'write_bytes');
}

/** Clock ticks per second of /proc/<pid>/stat: USER_HZ, 100 on every Linux ABI Node runs on. */
export const USER_HZ = 100;

/** Nanoseconds on a CPU from the text of a /proc/.../schedstat file (its first field). */
export function parseSchedstatRunNs(text: string): number {
  const ns = Number(text.trim().split(/\s+/)[0]);
  if (!Number.isFinite(ns) || ns < 0) throw new Error('not a schedstat line');
  return ns;
}

/** CPU time of every thread alive now, ns (schedstat: exact, where utime/stime are 10 ms ticks). */
export function threadsRunNs(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += parseSchedstatRunNs(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8'));
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return total;
}
