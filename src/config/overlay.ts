/**
 * The fleet's configuration overlay (docs/fleet.md, "config.set"): the keys `config.set` changed,
 * layered over the site file. It lives in the state directory (`fleet.configOverlay`, default
 * /var/lib/qrvend/fleet-config.json) because the site file is a root-owned dpkg conffile the
 * daemon cannot write under ProtectSystem=strict, and rewriting it would stop the next upgrade on
 * a conffile prompt. The trial and rollback markers live beside the overlay for the same reason.
 *
 * A damaged overlay must never brick a machine: reading it reports problems instead of throwing.
 */
import { readFileSync, renameSync, statSync } from 'node:fs';

/** Bigger than any real set of remote changes; a larger file is damaged or hostile. */
export const MAX_OVERLAY_BYTES = 256 * 1024;

/** The key the overlay may not set: where the overlay lives is decided by the defaults and the site file. */
export const OVERLAY_PATH_KEY = ['fleet', 'configOverlay'] as const;

export const previousOverlayFile = (overlay: string) => `${overlay}.previous`;
export const pendingFile = (overlay: string) => `${overlay}.pending.json`;
export const rolledBackFile = (overlay: string) => `${overlay}.rolled-back.json`;
/** Written by packaging/qrvend-trial.sh (the unit's ExecStartPre): trial starts begun and not seen ending. */
export const trialRunFile = (overlay: string) => `${overlay}.trial-run`;
export const rejectedOverlayFile = (overlay: string) => `${overlay}.rejected`;

export type OverlayRead =
  { kind: 'absent' } | { kind: 'object'; value: Record<string, unknown> } | { kind: 'damaged'; reason: string };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The overlay file as found: missing (no overlay), a JSON object, or damaged (with why). Never throws. */
export function readOverlay(file: string): OverlayRead {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    return { kind: 'damaged', reason: `cannot be read: ${(err as Error).message}` };
  }
  if (size > MAX_OVERLAY_BYTES) return { kind: 'damaged', reason: `is ${size} bytes, more than ${MAX_OVERLAY_BYTES}` };
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { kind: 'damaged', reason: `is not valid JSON: ${(err as Error).message}` };
  }
  if (!isPlainObject(value)) return { kind: 'damaged', reason: 'must hold a JSON object' };
  return { kind: 'object', value };
}

/** True when `value` sets fleet.configOverlay (refused: the overlay cannot move itself). */
export function touchesOverlayPath(value: Record<string, unknown>): boolean {
  const fleet = value[OVERLAY_PATH_KEY[0]];
  return isPlainObject(fleet) && Object.prototype.hasOwnProperty.call(fleet, OVERLAY_PATH_KEY[1]);
}

/** Moves a rejected overlay aside (`<file>.rejected`, replacing an older one); the path, or null when it could not. */
export function setOverlayAside(file: string): string | null {
  const to = rejectedOverlayFile(file);
  try {
    renameSync(file, to);
    return to;
  } catch {
    return null;
  }
}
