/**
 * The update agent's state file (`<updates.dir>/state.json`, docs/decisions/remote-updates.md): where an update
 * stands across restarts. Read and written by the update agent (payment worker) only; apart from
 * files.ts so that the main thread, which uses the other update files, does not load zod.
 */
import { mkdirSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../core/durable-file.js';
import { UPDATE_STATES } from '../fleet/contract/updates.js';
import { MAX_UPDATE_STATE_BYTES, readSmallJson, updateFiles } from './files.js';
import { UpdateManifest } from '../fleet/contract/manifest-schema.js';

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

export function readUpdateState(dir: string): UpdateStateFile | null {
  const parsed = UpdateStateFile.safeParse(readSmallJson(updateFiles(dir).state, MAX_UPDATE_STATE_BYTES));
  return parsed.success ? parsed.data : null;
}

export function writeUpdateState(dir: string, state: UpdateStateFile): void {
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  writeFileAtomic(updateFiles(dir).state, JSON.stringify(state), 0o640);
}
