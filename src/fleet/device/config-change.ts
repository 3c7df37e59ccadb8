/**
 * `config.set` from the fleet (design section 10, docs/fleet.md): the change is layered into the
 * fleet's overlay (src/config/overlay.ts, `fleet.configOverlay` in the state directory), the site
 * file under it and the defaults under that are validated together by the config schema, the
 * overlay written atomically (tmp + fsync + rename + fsync of the directory), and the agent
 * restarted. The site file is never written: it is a root-owned conffile in /etc.
 *
 * The next start is a trial: if the agent does not report healthy within `healthyWithinS`, the
 * previous overlay comes back (or none, if there was none), the agent restarts again and raises
 * CONFIG_ROLLED_BACK. Files beside the overlay carry this across the restarts:
 *   <overlay>.previous          the overlay as it was before the change (absent: there was none)
 *   <overlay>.pending.json      { healthyWithinS, at }: this start is a trial
 *   <overlay>.rolled-back.json  { at, reason }: raise CONFIG_ROLLED_BACK (gone after the next good change)
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { removeDurably, writeFileAtomic } from '../../core/durable-file.js';
import { layer, problemsOf, readBaseLayers } from '../../config/load.js';
import { pendingFile, previousOverlayFile, readOverlay, rolledBackFile, touchesOverlayPath } from '../../config/overlay.js';
import { ConfigSchema } from '../../config/schema.js';
import { remoteKeyProblems } from '../../config/remote-keys.js';

export { pendingFile, previousOverlayFile, rolledBackFile } from '../../config/overlay.js';

/** Exit code of a restart the fleet asked for (service.restart, config.set, a rollback): systemd's Restart=always brings the agent back. */
export const RESTART_EXIT_CODE = 75;

type Json = Parameters<typeof layer>[0];

export interface PendingChange {
  healthyWithinS: number;
  at: string;
}

export type ConfigSetCheck = { ok: true; overlayText: string } | { ok: false; code: 'CONFIG_INVALID' | 'BAD_ARGS'; message: string; paths: string[] };

/**
 * The overlay with `set` layered over it, validated over the site file and the defaults as the
 * daemon would load them. The overlay keeps only what the fleet set, accumulated over changes.
 */
export function checkConfigSet(siteFile: string, overlayFile: string, set: Record<string, unknown>): ConfigSetCheck {
  if (touchesOverlayPath(set)) {
    return { ok: false, code: 'BAD_ARGS', message: 'args.set.fleet.configOverlay: may be set only by the defaults or the site file, never from the fleet', paths: ['fleet.configOverlay'] };
  }
  const { defaults, site } = readBaseLayers(siteFile);
  const current = readOverlay(overlayFile);
  // A damaged overlay is what the daemon set aside at its start; the change starts afresh.
  const overlay = layer(current.kind === 'object' ? (current.value as Json) : {}, set as Json);
  const base = layer(defaults, site ?? {});
  const parsed = ConfigSchema.safeParse(layer(base, overlay));
  if (!parsed.success) {
    const problems = problemsOf(parsed.error);
    return { ok: false, code: 'CONFIG_INVALID', message: problems.map((p) => `${p.path}: ${p.reason}`).join('; ').slice(0, 1000), paths: problems.map((p) => p.path) };
  }
  // What the fleet may set at all (src/config/remote-keys.ts): the overlay as a whole, as the loader checks it.
  const refused = remoteKeyProblems(overlay as Record<string, unknown>, base);
  if (refused.length > 0) {
    return { ok: false, code: 'BAD_ARGS', message: refused.map((p) => `args.set.${p.path}: ${p.reason}`).join('; ').slice(0, 1000), paths: refused.map((p) => p.path) };
  }
  return { ok: true, overlayText: `${JSON.stringify(overlay, null, 2)}\n` };
}

/** Keeps the old overlay, marks the next start as a trial, writes the new overlay. */
export function applyConfigSet(overlayFile: string, overlayText: string, healthyWithinS: number, now: Date): void {
  mkdirSync(dirname(overlayFile), { recursive: true, mode: 0o750 });
  if (existsSync(overlayFile)) writeFileAtomic(previousOverlayFile(overlayFile), readFileSync(overlayFile, 'utf8'));
  else removeDurably(previousOverlayFile(overlayFile));
  writeFileAtomic(pendingFile(overlayFile), JSON.stringify({ healthyWithinS, at: now.toISOString() } satisfies PendingChange));
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
  if (existsSync(previousOverlayFile(overlayFile))) writeFileAtomic(overlayFile, readFileSync(previousOverlayFile(overlayFile), 'utf8'));
  else removeDurably(overlayFile);
  markRolledBack(overlayFile, reason, now);
  removeDurably(pendingFile(overlayFile));
  removeDurably(previousOverlayFile(overlayFile));
  return true;
}

/** The trial passed: the change stays, and a rollback alarm of an earlier change is over. */
export function confirmChange(overlayFile: string): void {
  removeDurably(pendingFile(overlayFile));
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
    copy = `${overlayFile}.removed-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`;
    copyFileSync(overlayFile, copy);
    removeDurably(overlayFile);
  }
  removeDurably(pendingFile(overlayFile));
  removeDurably(previousOverlayFile(overlayFile));
  removeDurably(rolledBackFile(overlayFile));
  return copy;
}
