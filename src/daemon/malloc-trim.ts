/**
 * Handing malloc's free memory back to the system (native/malloc-trim.c, built into
 * dist/src/native/qrvend-trim.node). glibc returns only the top of each heap when memory is freed;
 * what SQLite, Node and V8 free in the middle stays resident as free chunks, 3-7 MB of the
 * daemon's RSS after a burst of sessions (BENCHMARKS.md, memory). Run by each thread after its
 * quiet collection (heap-limits.ts), when nothing waits on it.
 *
 * Without the addon (Node installed without its headers, so native/build.mjs skipped it) the agent
 * runs as before, with more resident memory: `available` says which, for the start's log line.
 */
import { createRequire } from 'node:module';

const ADDON = '../native/qrvend-trim.node';

let addon: { trim(): boolean } | null | undefined;

function load(): { trim(): boolean } | null {
  if (addon === undefined) {
    try {
      addon = createRequire(import.meta.url)(ADDON) as { trim(): boolean };
    } catch {
      addon = null;
    }
  }
  return addon;
}

/** The addon is there and loads in this thread. */
export function mallocTrimAvailable(): boolean {
  return load() !== null;
}

/** malloc_trim(0): true when memory was given back; false too when the addon is not there. */
export function trimMalloc(): boolean {
  return load()?.trim() ?? false;
}
