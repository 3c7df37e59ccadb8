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
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { removeDurably, writeFileAtomic } from '../../core/durable-file.js';
import { RELEASE_VERSION } from '../manifest-schema.js';
import { readSmallJson, updateFiles } from '../files.js';

/** The root side's state directory; tests run the daemon against another one. */
export const RELEASE_STATE_DIR_ENV = 'QRVEND_RELEASE_STATE_DIR';
const DEFAULT_RELEASE_STATE_DIR = '/var/lib/qrvend-release';
const MAX_FILE_BYTES = 4096;

const Version = z.string().regex(RELEASE_VERSION);
const ReleaseTrial = z.object({ version: Version, previous: Version, runs: z.number().int().min(0) });
export type ReleaseTrial = z.infer<typeof ReleaseTrial>;
const RolledBack = z.object({ version: Version, previous: Version, at: z.string().max(40), reason: z.string().max(300) });
export type ReleaseRolledBack = z.infer<typeof RolledBack> & { reported: boolean };

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

function readChecked<T>(file: string, schema: z.ZodType<T>): T | null {
  const parsed = schema.safeParse(readSmallJson(file, MAX_FILE_BYTES));
  return parsed.success ? parsed.data : null;
}

/** The trial the root side counts, when it is this version's; null otherwise (or unreadable). */
export function readReleaseTrial(version: string, file: string = releaseTrialFile()): ReleaseTrial | null {
  const trial = readChecked(file, ReleaseTrial);
  return trial !== null && trial.version === version ? trial : null;
}

export function readHealthy(updatesDir: string): string | null {
  return readChecked(healthyFile(updatesDir), z.object({ version: Version }))?.version ?? null;
}

/** The trial start is healthy: the root side ends the trial; an earlier rollback's alarm is over. */
export function writeHealthy(updatesDir: string, version: string): void {
  writeFileAtomic(healthyFile(updatesDir), `${JSON.stringify({ version })}\n`, 0o644);
  removeDurably(rolledBackFile(updatesDir));
  removeDurably(rolledBackReportedFile(updatesDir));
}

export function readReleaseRolledBack(updatesDir: string): ReleaseRolledBack | null {
  const report = readChecked(rolledBackFile(updatesDir), RolledBack);
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
