/**
 * The machine the figures belong to, and a scratch directory on a real disk: a ledger on tmpfs
 * would make "durable write" latency meaningless (no device behind the fsync).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (bench sources compile to dist/bench/support/). */
export const REPO_ROOT = resolve(fileURLToPath(new URL('../../../', import.meta.url)));

/** The qrvend executable as `npm run bench` built it. */
export const QRVEND_MAIN = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

export interface MountInfo {
  device: string;
  mountPoint: string;
  fsType: string;
}

/** The mount holding `path` (longest mount-point prefix in /proc/mounts). */
export function mountOf(path: string): MountInfo | null {
  let text: string;
  try {
    text = readFileSync('/proc/mounts', 'utf8');
  } catch {
    return null;
  }
  const abs = resolve(path);
  let best: MountInfo | null = null;
  for (const line of text.split('\n')) {
    const [device, mountPoint, fsType] = line.split(' ');
    if (device === undefined || mountPoint === undefined || fsType === undefined) continue;
    const inside = abs === mountPoint || abs.startsWith(mountPoint.endsWith('/') ? mountPoint : `${mountPoint}/`);
    if (inside && (best === null || mountPoint.length > best.mountPoint.length)) best = { device, mountPoint, fsType };
  }
  return best;
}

const MEMORY_FILESYSTEMS = new Set(['tmpfs', 'ramfs', 'overlay-tmpfs']);

/** A fresh scratch directory on a disk-backed file system (os.tmpdir() unless that is tmpfs). */
export function diskScratchDir(prefix: string): { dir: string; mount: MountInfo | null; remove(): void } {
  let base = os.tmpdir();
  if (MEMORY_FILESYSTEMS.has(mountOf(base)?.fsType ?? '')) base = join(REPO_ROOT, 'bench');
  const dir = mkdtempSync(join(base, `qrvend-bench-${prefix}-`));
  return { dir, mount: mountOf(dir), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  node: string;
  platform: string;
  kernel: string;
  memoryMb: number;
  scratchDisk: string;
}

function describeDisk(mount: MountInfo | null): string {
  if (mount === null) return 'unknown';
  const name = /^\/dev\/([a-z]+)/.exec(mount.device)?.[1];
  let kind = '';
  if (name !== undefined) {
    try {
      kind =
        readFileSync(`/sys/block/${name}/queue/rotational`, 'utf8').trim() === '1'
          ? ', rotational'
          : ', non-rotational';
    } catch {
      kind = '';
    }
  }
  return `${mount.device} (${mount.fsType} at ${mount.mountPoint}${kind})`;
}

export function machineInfo(): MachineInfo {
  const scratch = diskScratchDir('probe');
  scratch.remove();
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    kernel: os.release(),
    memoryMb: Math.round(os.totalmem() / 1048576),
    scratchDisk: describeDisk(scratch.mount),
  };
}
