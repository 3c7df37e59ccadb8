/**
 * The update files in the state directory (design section 12; the contract with the root-side
 * activator, docs/updates-on-the-machine.md). The agent writes only here; every file it writes is
 * untrusted input for the root side, and every file the root side leaves is read with a bound.
 */
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../core/durable-file.js';
import { UPDATE_STATES } from '../fleet/contract/updates.js';
import { UpdateManifest } from './manifest-schema.js';

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

const MAX_STATE_BYTES = 64 * 1024;
const MAX_SMALL_FILE_BYTES = 4 * 1024;

export const UpdateStateFile = z.strictObject({
  v: z.literal(1),
  version: z.string().max(64),
  rolloutId: z.string().max(64).nullable(),
  url: z.string().max(2048),
  manifest: UpdateManifest,
  state: z.enum(UPDATE_STATES),
  /** Bytes received for this update, all attempts and restarts (the data cap). */
  fetched: z.number().int().min(0),
  detail: z.string().max(512).nullable(),
  at: z.string().max(40),
});
export type UpdateStateFile = z.infer<typeof UpdateStateFile>;

/** Reads a small JSON file this agent or the root side wrote; null when absent, damaged or too large. */
export function readSmallJson(path: string, maxBytes = MAX_SMALL_FILE_BYTES): unknown {
  try {
    if (!existsSync(path) || statSync(path).size > maxBytes) return null;
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

export function readUpdateState(dir: string): UpdateStateFile | null {
  const parsed = UpdateStateFile.safeParse(readSmallJson(updateFiles(dir).state, MAX_STATE_BYTES));
  return parsed.success ? parsed.data : null;
}

export function writeUpdateState(dir: string, state: UpdateStateFile): void {
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  writeFileAtomic(updateFiles(dir).state, JSON.stringify(state), 0o640);
}

/** What the activator reads: written only once the machine is idle and new sessions are held off. */
export function writeActivationRequest(dir: string, request: { version: string; rolloutId: string | null }, now: Date): void {
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  writeFileAtomic(updateFiles(dir).activate, JSON.stringify({ version: request.version, rolloutId: request.rolloutId, requestedAt: now.toISOString() }), 0o640);
}
