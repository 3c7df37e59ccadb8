/**
 * The agent's side of a new release's trial (docs/releases.md). The root side
 * (packaging/qrvend-release.sh) switched /opt/qrvend/current to the new release and counts its
 * trial in its own state directory; it judges the trial from outside the agent. The agent only:
 *   - reads the root's trial state: this start is a trial when it names the running version;
 *   - once healthy (the same gate as a configuration trial: reader enabled, payment side ready with
 *     the ledger open for writing, the fleet link's own round trip), writes
 *     <updates.dir>/healthy.json {version} durably: the root side ends the trial on it;
 *   - after a rollback (the previous release runs again), reads <updates.dir>/rolled-back.json
 *     {version, previous, at, reason} to raise UPDATE_ROLLED_BACK and report it once (the update
 *     agent, src/updates/agent.ts, reads it too, for the offer's status).
 * The file names are the update agent's (src/updates/files.ts).
 * Both files the root side reads or writes are small JSON: bounded in size, checked like any input.
 * Checked by hand, not with zod: this runs in the daemon's main thread, which does not load zod
 * (about 3 MB of heap per isolate; BENCHMARKS.md, memory).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDurably, writeFileAtomic } from '../../core/durable-file.js';
import { RELEASE_VERSION } from '../../fleet/contract/release-version.js';
import { readSmallJson, updateFiles } from '../files.js';

/** The root side's state directory; tests run the daemon against another one. */
export const RELEASE_STATE_DIR_ENV = 'QRVEND_RELEASE_STATE_DIR';
const DEFAULT_RELEASE_STATE_DIR = '/var/lib/qrvend-release';
const MAX_FILE_BYTES = 4096;

export interface ReleaseTrial {
  version: string;
  previous: string;
  runs: number;
}
interface RolledBack {
  version: string;
  previous: string;
  at: string;
  reason: string;
}
export type ReleaseRolledBack = RolledBack & { reported: boolean };

const isVersion = (v: unknown): v is string => typeof v === 'string' && RELEASE_VERSION.test(v);
const isText = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Each reader keeps the members it knows (others are ignored) or returns null when one is missing or wrong. */
const readTrial = (v: unknown): ReleaseTrial | null =>
  isObject(v) &&
  isVersion(v.version) &&
  isVersion(v.previous) &&
  Number.isSafeInteger(v.runs) &&
  (v.runs as number) >= 0
    ? { version: v.version, previous: v.previous, runs: v.runs as number }
    : null;
const readRolledBack = (v: unknown): RolledBack | null =>
  isObject(v) && isVersion(v.version) && isVersion(v.previous) && isText(v.at, 40) && isText(v.reason, 300)
    ? { version: v.version, previous: v.previous, at: v.at, reason: v.reason }
    : null;
const readVersionOnly = (v: unknown): { version: string } | null =>
  isObject(v) && isVersion(v.version) ? { version: v.version } : null;

export function releaseTrialFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(env[RELEASE_STATE_DIR_ENV] || DEFAULT_RELEASE_STATE_DIR, 'trial.json');
}

export const healthyFile = (dir: string): string => updateFiles(dir).healthy;
export const rolledBackFile = (dir: string): string => updateFiles(dir).rolledBack;
/**
 * Which rollback was reported (its version and time): the alarm stays raised from rolled-back.json,
 * which the update agent reads too, while its event is not sent twice.
 */
export const rolledBackReportedFile = (dir: string): string => join(dir, 'rolled-back.reported');

function readChecked<T>(file: string, check: (value: unknown) => T | null): T | null {
  return check(readSmallJson(file, MAX_FILE_BYTES));
}

/** The trial the root side counts, when it is this version's; null otherwise (or unreadable). */
export function readReleaseTrial(version: string, file: string = releaseTrialFile()): ReleaseTrial | null {
  const trial = readChecked(file, readTrial);
  return trial !== null && trial.version === version ? trial : null;
}

export function readHealthy(updatesDir: string): string | null {
  return readChecked(healthyFile(updatesDir), readVersionOnly)?.version ?? null;
}

/** The trial start is healthy: the root side ends the trial; an earlier rollback's alarm is over. */
export function writeHealthy(updatesDir: string, version: string): void {
  writeFileAtomic(healthyFile(updatesDir), `${JSON.stringify({ version })}\n`, 0o644);
  removeDurably(rolledBackFile(updatesDir));
  removeDurably(rolledBackReportedFile(updatesDir));
}

export function readReleaseRolledBack(updatesDir: string): ReleaseRolledBack | null {
  const report = readChecked(rolledBackFile(updatesDir), readRolledBack);
  if (report === null) return null;
  let reported = false;
  try {
    reported = readFileSync(rolledBackReportedFile(updatesDir), 'utf8') === reportedMark(report);
  } catch {
    // not reported yet
  }
  return { ...report, reported };
}

const reportedMark = (r: { version: string; at: string }) => `${r.version} ${r.at}\n`;

export function markRolledBackReported(updatesDir: string, report: { version: string; at: string }): void {
  writeFileAtomic(rolledBackReportedFile(updatesDir), reportedMark(report), 0o640);
}

/** The alarm's detail: what a technician reads in `qrvend fleet status`. */
export function rolledBackDetail(r: ReleaseRolledBack): string {
  return `release ${r.version} was rolled back to ${r.previous} at ${r.at}: ${r.reason}`;
}
