/**
 * The update files in the state directory (docs/decisions/remote-updates.md; the contract with the root-side
 * activator, docs/updates-on-the-machine.md). The agent writes only here; every file it writes is
 * untrusted input for the root side, and every file the root side leaves is read with a bound.
 * No zod here: the daemon's main thread uses these names (activation, release trial) and does not
 * load zod; the update agent's own state file, checked by a schema, is in state-file.ts.
 */
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../core/durable-file.js';
import { ROLLOUT_ID } from '../fleet/contract/rollout-id.js';

/** `<updates.dir>`, or `updates/` beside the ledger. */
export function updatesDir(config: { store: { path: string }; updates: { dir: string | null } }): string {
  return config.updates.dir ?? join(dirname(config.store.path), 'updates');
}

export const updateFiles = (dir: string) => ({
  state: join(dir, 'state.json'),
  activate: join(dir, 'activate.json'),
  restart: join(dir, 'restart.json'),
  activationRefused: join(dir, 'activation-refused.json'),
  healthy: join(dir, 'healthy.json'),
  rolledBack: join(dir, 'rolled-back.json'),
  downloads: join(dir, 'downloads'),
  download: (version: string) => join(dir, 'downloads', version),
});

const MAX_SMALL_FILE_BYTES = 4 * 1024;
/** The update agent's state file (state-file.ts) holds a whole manifest: a larger bound than the others. */
export const MAX_UPDATE_STATE_BYTES = 64 * 1024;

/** Reads a small JSON file this agent or the root side wrote; null when absent, damaged or too large. */
export function readSmallJson(path: string, maxBytes = MAX_SMALL_FILE_BYTES): unknown {
  try {
    if (!existsSync(path) || statSync(path).size > maxBytes) return null;
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

/** What the activator reads: written only once the machine is idle and new sessions are held off. */
export function writeActivationRequest(
  dir: string,
  request: { version: string; rolloutId: string | null },
  now: Date,
): void {
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  writeFileAtomic(
    updateFiles(dir).activate,
    JSON.stringify({ version: request.version, rolloutId: request.rolloutId, requestedAt: now.toISOString() }),
    0o640,
  );
}

/**
 * The rollout that offered `version`, from the update agent's state file, checked by hand (the
 * main thread's release-trial watcher uses it, and the main thread does not load zod; the
 * update agent reads the whole file with state-file.ts). Null when the file is missing, damaged,
 * about another version, or has no valid rollout id.
 */
export function rolloutIdOf(dir: string, version: string): string | null {
  const state = readSmallJson(updateFiles(dir).state, MAX_UPDATE_STATE_BYTES);
  if (typeof state !== 'object' || state === null) return null;
  const { v, version: stateVersion, rolloutId } = state as Record<string, unknown>;
  return v === 1 && stateVersion === version && typeof rolloutId === 'string' && ROLLOUT_ID.test(rolloutId)
    ? rolloutId
    : null;
}
