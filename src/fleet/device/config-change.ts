/**
 * `config.set` from the fleet (design section 10): the merged result is validated by the config
 * schema, the site file written atomically (tmp + fsync + rename + fsync of the directory), and
 * the agent restarted. The next start is a trial: if the agent does not report healthy within
 * `healthyWithinS`, the previous file comes back, the agent restarts again and raises
 * CONFIG_ROLLED_BACK. Three files beside the site file carry this across the restarts:
 *   <file>.previous          the file as it was before the change
 *   <file>.pending.json      { healthyWithinS, at }: this start is a trial
 *   <file>.rolled-back.json  { at, reason }: raise CONFIG_ROLLED_BACK (gone after the next good change)
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { DEFAULT_CONFIG_PATH, layer, problemsOf, readJsonFile } from '../../config/load.js';
import { ConfigSchema } from '../../config/schema.js';

/** Exit code of a restart the fleet asked for (service.restart, config.set, a rollback): systemd's Restart=always brings the agent back. */
export const RESTART_EXIT_CODE = 75;

type Json = Parameters<typeof layer>[0];

export interface PendingChange {
  healthyWithinS: number;
  at: string;
}

export const previousFile = (file: string) => `${file}.previous`;
export const pendingFile = (file: string) => `${file}.pending.json`;
export const rolledBackFile = (file: string) => `${file}.rolled-back.json`;

/** Writes `text` to `path` so that a crash leaves either the old file or the new one, whole. */
export function writeFileAtomic(path: string, text: string, mode = 0o640): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'w', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

export type ConfigSetCheck = { ok: true; siteText: string } | { ok: false; code: 'CONFIG_INVALID' | 'BAD_ARGS'; message: string; paths: string[] };

/** The site file with `set` layered over it, validated as the daemon would load it. */
export function checkConfigSet(file: string, set: Record<string, unknown>): ConfigSetCheck {
  const site = readJsonFile(file, 'configuration file');
  const merged = layer(site, set as Json);
  const full = layer(readJsonFile(DEFAULT_CONFIG_PATH, 'default configuration'), merged);
  const parsed = ConfigSchema.safeParse(full);
  if (!parsed.success) {
    const problems = problemsOf(parsed.error);
    return { ok: false, code: 'CONFIG_INVALID', message: problems.map((p) => `${p.path}: ${p.reason}`).join('; ').slice(0, 1000), paths: problems.map((p) => p.path) };
  }
  return { ok: true, siteText: `${JSON.stringify(merged, null, 2)}\n` };
}

/** Keeps the old file, marks the next start as a trial, writes the new file. */
export function applyConfigSet(file: string, siteText: string, healthyWithinS: number, now: Date): void {
  writeFileAtomic(previousFile(file), readFileSync(file, 'utf8'));
  writeFileAtomic(pendingFile(file), JSON.stringify({ healthyWithinS, at: now.toISOString() } satisfies PendingChange));
  writeFileAtomic(file, siteText);
}

export function readPendingChange(file: string): PendingChange | null {
  if (!existsSync(pendingFile(file))) return null;
  try {
    const value = JSON.parse(readFileSync(pendingFile(file), 'utf8')) as PendingChange;
    const s = Number(value.healthyWithinS);
    return { healthyWithinS: Number.isFinite(s) ? Math.min(600, Math.max(5, s)) : 60, at: String(value.at) };
  } catch {
    return { healthyWithinS: 60, at: 'unknown' };
  }
}

/** The trial failed: the previous file comes back and the next start raises CONFIG_ROLLED_BACK. */
export function rollBack(file: string, reason: string, now: Date): boolean {
  if (!existsSync(previousFile(file))) {
    rmSync(pendingFile(file), { force: true });
    return false;
  }
  writeFileAtomic(file, readFileSync(previousFile(file), 'utf8'));
  writeFileAtomic(rolledBackFile(file), JSON.stringify({ at: now.toISOString(), reason: reason.slice(0, 400) }));
  rmSync(pendingFile(file), { force: true });
  rmSync(previousFile(file), { force: true });
  return true;
}

/** The trial passed: the change stays, and a rollback alarm of an earlier change is over. */
export function confirmChange(file: string): void {
  rmSync(pendingFile(file), { force: true });
  rmSync(previousFile(file), { force: true });
  rmSync(rolledBackFile(file), { force: true });
}

export function readRolledBack(file: string): { at: string; reason: string } | null {
  if (!existsSync(rolledBackFile(file))) return null;
  try {
    const value = JSON.parse(readFileSync(rolledBackFile(file), 'utf8')) as { at: string; reason: string };
    return { at: String(value.at), reason: String(value.reason) };
  } catch {
    return { at: 'unknown', reason: 'unknown' };
  }
}
