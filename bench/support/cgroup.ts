/**
 * A Pi-class CPU budget for the daemon: a cgroup capped at half of one core (50 ms of CPU per
 * 100 ms period). cgroup v2 (`cpu.max` "50000 100000") where a v2 hierarchy has the cpu controller;
 * otherwise the v1 cpu controller (`cpu.cfs_quota_us` 50000 / `cpu.cfs_period_us` 100000, the same
 * CFS bandwidth limit), as on hybrid systems where cpu is still bound to v1. Needs root. The child
 * cgroup is created for the run and removed afterwards.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const QUOTA_US = 50_000;
export const PERIOD_US = 100_000;

export interface CpuMount {
  kind: 'v2' | 'v1';
  path: string;
}

/**
 * Where a CPU quota can be set, from the text of /proc/mounts: cgroup2 mounts whose
 * cgroup.controllers (read through `controllersOf`) lists cpu, then v1 mounts with the cpu option.
 */
export function cpuMounts(mountsText: string, controllersOf: (mountPoint: string) => string | null): CpuMount[] {
  const v2: CpuMount[] = [];
  const v1: CpuMount[] = [];
  for (const line of mountsText.split('\n')) {
    const [, mountPoint, fsType, options] = line.split(' ');
    if (mountPoint === undefined || options === undefined) continue;
    if (fsType === 'cgroup2' && (controllersOf(mountPoint) ?? '').split(/\s+/).includes('cpu'))
      v2.push({ kind: 'v2', path: mountPoint });
    if (fsType === 'cgroup' && options.split(',').includes('cpu')) v1.push({ kind: 'v1', path: mountPoint });
  }
  return [...v2, ...v1];
}

export interface CpuCgroup {
  kind: 'v2' | 'v1';
  dir: string;
  /** Writing a pid here moves that process (all its threads) into the cgroup. */
  procsFile: string;
  /** Removes the cgroup (every process in it must have exited). */
  remove(): void;
}

/** A fresh capped cgroup, or the reason there cannot be one here. */
export function createCpuCgroup(name: string): CpuCgroup | { skipped: string } {
  if (process.getuid?.() !== 0)
    return { skipped: 'not root: creating a cgroup needs root (run the bench as root to measure the CPU budget)' };
  let mounts: string;
  try {
    mounts = readFileSync('/proc/mounts', 'utf8');
  } catch {
    return { skipped: 'no /proc/mounts' };
  }
  const read = (p: string) => {
    try {
      return readFileSync(join(p, 'cgroup.controllers'), 'utf8');
    } catch {
      return null;
    }
  };
  const problems: string[] = [];
  for (const m of cpuMounts(mounts, read)) {
    const dir = join(m.path, name);
    try {
      if (m.kind === 'v2') {
        const subtree = readFileSync(join(m.path, 'cgroup.subtree_control'), 'utf8');
        if (!subtree.split(/\s+/).includes('cpu')) writeFileSync(join(m.path, 'cgroup.subtree_control'), '+cpu');
        mkdirSync(dir);
        writeFileSync(join(dir, 'cpu.max'), `${QUOTA_US} ${PERIOD_US}`);
      } else {
        mkdirSync(dir);
        writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
        writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(QUOTA_US));
      }
      return {
        kind: m.kind,
        dir,
        procsFile: join(dir, 'cgroup.procs'),
        remove: () => {
          if (existsSync(dir)) rmdirSync(dir);
        },
      };
    } catch (err) {
      problems.push(`${m.kind} at ${m.path}: ${(err as Error).message}`);
      try {
        if (existsSync(dir)) rmdirSync(dir);
      } catch {
        // left for the reason below
      }
    }
  }
  return {
    skipped:
      problems.length > 0
        ? `no writable cgroup with a CPU controller (${problems.join('; ')})`
        : 'no cgroup v2 hierarchy with the cpu controller and no v1 cpu controller mounted',
  };
}
