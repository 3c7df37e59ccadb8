/**
 * `config.set` from the fleet (docs/decisions/fleet-link.md, docs/fleet.md): the change is layered into the
 * fleet's overlay (src/config/overlay.ts, `fleet.configOverlay` in the state directory), the site
 * file under it and the defaults under that are validated together by the config schema, the
 * overlay written atomically (tmp + fsync + rename + fsync of the directory), and the agent
 * restarted. The site file is never written: it is a root-owned conffile in /etc.
 *
 * Before anything is written, the configuration the change would give must pass what the next
 * start checks: the schema, and the files it names (src/doctor/start-checks.ts, the daemon's own
 * list). A change the next start would refuse is refused before it is written, naming the key
 * (config-set-check.ts).
 *
 * The next start is a trial. The agent confirms it once healthy (main-side.ts); when the agent
 * does not come back healthy, the previous overlay comes back (or none, if there was none) and the
 * next start raises CONFIG_ROLLED_BACK. The rollback of a trial start that ended (crash, exit,
 * kill by systemd) or was cut short too often is done outside the agent, by the unit's
 * ExecStartPre/ExecStopPost (packaging/qrvend-trial.sh); the agent itself rolls back a trial it
 * survives but that stays unhealthy. Files beside the overlay carry this across the restarts:
 *   <overlay>.previous          the overlay as it was before the change (absent: there was none)
 *   <overlay>.pending.json      { healthyWithinS, at }: the next starts are a trial
 *   <overlay>.trial-run         written by qrvend-trial.sh: trial starts begun and not seen ending
 *   <overlay>.rolled-back.json  { at, reason }: raise CONFIG_ROLLED_BACK (gone after the next good change)
 *
 * The check of a change (config-set-check.ts) is apart: it needs the config schema, and the marks
 * here are also handled by the daemon's main thread, which does not load zod (BENCHMARKS.md, memory).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { removeDurably, writeFileAtomic } from '../../core/durable-file.js';
import { ExitCodes } from '../../core/errors.js';
import { pendingFile, previousOverlayFile, rolledBackFile, trialRunFile } from '../../config/overlay.js';

export { pendingFile, previousOverlayFile, rolledBackFile, trialRunFile } from '../../config/overlay.js';

/** Exit code of a restart the fleet asked for: ExitCodes.RESTART, under the name its callers know. */
export const RESTART_EXIT_CODE = ExitCodes.RESTART;

export interface PendingChange {
  healthyWithinS: number;
  at: string;
}

/** Keeps the old overlay, marks the next start as a trial, writes the new overlay. */
export function applyConfigSet(overlayFile: string, overlayText: string, healthyWithinS: number, now: Date): void {
  mkdirSync(dirname(overlayFile), { recursive: true, mode: 0o750 });
  if (existsSync(overlayFile)) writeFileAtomic(previousOverlayFile(overlayFile), readFileSync(overlayFile, 'utf8'));
  else removeDurably(previousOverlayFile(overlayFile));
  // Starts counted for an earlier trial are not this one's.
  removeDurably(trialRunFile(overlayFile));
  writeFileAtomic(
    pendingFile(overlayFile),
    JSON.stringify({ healthyWithinS, at: now.toISOString() } satisfies PendingChange),
  );
  writeFileAtomic(overlayFile, overlayText);
}

export function readPendingChange(overlayFile: string): PendingChange | null {
  if (!existsSync(pendingFile(overlayFile))) return null;
  try {
    const value = JSON.parse(readFileSync(pendingFile(overlayFile), 'utf8')) as PendingChange;
    const s = Number(value.healthyWithinS);
    return { healthyWithinS: Number.isFinite(s) ? Math.min(600, Math.max(5, s)) : 60, at: String(value.at) };
  } catch {
    return { healthyWithinS: 60, at: 'unknown' };
  }
}

/** Leaves the mark that raises CONFIG_ROLLED_BACK at the next start. */
export function markRolledBack(overlayFile: string, reason: string, now: Date): void {
  mkdirSync(dirname(overlayFile), { recursive: true, mode: 0o750 });
  writeFileAtomic(rolledBackFile(overlayFile), JSON.stringify({ at: now.toISOString(), reason: reason.slice(0, 400) }));
}

/** The trial failed: the previous overlay (or none) comes back and the next start raises CONFIG_ROLLED_BACK. */
export function rollBack(overlayFile: string, reason: string, now: Date): boolean {
  if (!existsSync(pendingFile(overlayFile))) return false;
  if (existsSync(previousOverlayFile(overlayFile)))
    writeFileAtomic(overlayFile, readFileSync(previousOverlayFile(overlayFile), 'utf8'));
  else removeDurably(overlayFile);
  markRolledBack(overlayFile, reason, now);
  // In the order qrvend-trial.sh removes them: `previous` last, so a cut in between rolls back again.
  removeDurably(pendingFile(overlayFile));
  removeDurably(trialRunFile(overlayFile));
  removeDurably(previousOverlayFile(overlayFile));
  return true;
}

/** The trial passed: the change stays, and a rollback alarm of an earlier change is over. */
export function confirmChange(overlayFile: string): void {
  removeDurably(pendingFile(overlayFile));
  removeDurably(trialRunFile(overlayFile));
  removeDurably(previousOverlayFile(overlayFile));
  removeDurably(rolledBackFile(overlayFile));
}

export function readRolledBack(overlayFile: string): { at: string; reason: string } | null {
  if (!existsSync(rolledBackFile(overlayFile))) return null;
  try {
    const value = JSON.parse(readFileSync(rolledBackFile(overlayFile), 'utf8')) as { at: string; reason: string };
    return { at: String(value.at), reason: String(value.reason) };
  } catch {
    return { at: 'unknown', reason: 'unknown' };
  }
}

/**
 * The loader rejected the overlay (and set it aside): in a trial the previous overlay comes back
 * at once; otherwise the machine runs on the site file and the defaults. Either way the next
 * start raises CONFIG_ROLLED_BACK.
 */
export function settleRejectedOverlay(overlayFile: string, reason: string, now: Date): 'previous restored' | 'none' {
  if (rollBack(overlayFile, reason, now)) return 'previous restored';
  markRolledBack(overlayFile, reason, now);
  return 'none';
}

/**
 * A technician drops every change from the fleet (`qrvend config reset-remote`): the overlay is
 * kept as `<overlay>.removed-<time>` and the trial and rollback marks go. Returns the copy's path,
 * or null when there was no overlay.
 */
export function resetRemote(overlayFile: string, now: Date): string | null {
  let copy: string | null = null;
  if (existsSync(overlayFile)) {
    copy = `${overlayFile}.removed-${now
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z')}`;
    copyFileSync(overlayFile, copy);
    removeDurably(overlayFile);
  }
  removeDurably(pendingFile(overlayFile));
  removeDurably(trialRunFile(overlayFile));
  removeDurably(previousOverlayFile(overlayFile));
  removeDurably(rolledBackFile(overlayFile));
  return copy;
}
