/**
 * Files whose loss or a torn write would matter (docs/operations.md, "Files the agent writes").
 *
 * A power cut can come at any moment, and ext4's default data=ordered mode gives no promise about
 * a file's content until it is fsynced, nor about a rename until its directory is. So a file that
 * the agent relies on after a restart is written to a temporary file beside it, fsynced, renamed
 * over the old one and the directory fsynced: a cut leaves either the old file or the new one,
 * whole, never an empty or half-written one.
 */
import { closeSync, copyFileSync, existsSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open as openAsync, rename as renameAsync, rm as rmAsync } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Makes the directory's entries (a rename, a removal, a new file) durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes `text` to `path` so that a crash leaves either the old file or the new one, whole. */
export function writeFileAtomic(path: string, text: string | Uint8Array, mode = 0o640): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'w', mode);
  try {
    if (typeof text === 'string') writeSync(fd, text);
    else writeSync(fd, text);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, path);
  fsyncDir(dirname(path));
}

/**
 * writeFileAtomic on libuv's thread pool: the caller's thread never waits for the disk. For the
 * machine loop (docs/decisions/threads.md), where an fsync on a slow SD card would delay an MDB answer.
 * Callers keep one write in flight at a time (two would race for the same temporary file).
 */
export async function writeFileAtomicAsync(path: string, text: string | Uint8Array, mode = 0o640): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const file = await openAsync(tmp, 'w', mode);
  try {
    await file.writeFile(text);
    await file.sync();
  } catch (err) {
    await file.close();
    await rmAsync(tmp, { force: true });
    throw err;
  }
  await file.close();
  await renameAsync(tmp, path);
  const dir = await openAsync(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** Removes `path` (if there) and makes the removal durable. */
export function removeDurably(path: string): void {
  if (!existsSync(path)) return;
  rmSync(path, { force: true });
  fsyncDir(dirname(path));
}

/** Renames `from` to `to` and makes the move durable (both directories when they differ). */
export function renameDurably(from: string, to: string): void {
  renameSync(from, to);
  fsyncDir(dirname(to));
  if (dirname(from) !== dirname(to)) fsyncDir(dirname(from));
}

/** Copies `from` to `to` (a new file) and makes the copy durable: its content and its directory entry. */
export function copyFileDurably(from: string, to: string): void {
  copyFileSync(from, to);
  const fd = openSync(to, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  fsyncDir(dirname(to));
}
