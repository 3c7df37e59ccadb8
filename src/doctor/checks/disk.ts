/** Free space where the ledger lives: a full disk makes the agent refuse new sessions. */
import { statfs } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Check } from '../types.js';

const MB = 1024 * 1024;
const FAIL_BELOW = 50 * MB;
const WARN_BELOW = 200 * MB;

/** The directory itself, or its nearest existing parent (before the first start it may not exist). */
function nearestExisting(path: string): string {
  let dir = path;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

export const diskCheck: Check = {
  id: 'disk',
  title: 'disk space for the ledger',
  needsConfig: true,
  async run(_ctx, config) {
    const dir = nearestExisting(dirname(config.store.path));
    const fs = await statfs(dir);
    const freeBytes = fs.bavail * fs.bsize;
    const totalBytes = fs.blocks * fs.bsize;
    const details = { path: dir, freeBytes, totalBytes };
    const free = `${Math.floor(freeBytes / MB)} MB free of ${Math.floor(totalBytes / MB)} MB at ${dir}`;
    if (freeBytes < FAIL_BELOW) {
      return {
        status: 'FAIL',
        summary: free,
        action:
          'free space now (journalctl --vacuum-size=50M; old files in ' +
          '/var/tmp): new sessions are refused when the ledger cannot write',
        details,
      };
    }
    if (freeBytes < WARN_BELOW) {
      return { status: 'WARN', summary: free, action: 'free some space soon (journalctl --vacuum-size=50M)', details };
    }
    return { status: 'OK', summary: free, details };
  },
};
