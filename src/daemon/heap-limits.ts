/**
 * Heap sizes of the daemon's V8 isolates and their collections (docs/decisions/targets.md: resident memory,
 * all threads, <= 1.25x a bare Node process with two worker threads).
 *
 * Left to its defaults, V8 sizes each heap for the machine's RAM (a young generation of 16 MB
 * semi-spaces, an old generation allowed to fill up to hundreds of MB before the first full
 * collection), so a busy isolate keeps its garbage resident: 100,000 vends grew the payment
 * worker's heap by tens of MB while its live data stayed around 13 MB (BENCHMARKS.md). Capping the
 * heaps close to what is live makes V8 collect instead of grow, which keeps RSS flat.
 *
 * The display worker's caps are in src/display/display-thread.ts. The caps leave several times the measured live size
 * as headroom (the live heaps are printed
 * per thread in the `stats` log line); running out would stop the thread, so they are not tight.
 * The main thread's isolate exists before any code runs, so its limits are node flags given by the
 * launcher (packaging/qrvend-wrapper.sh for `qrvend run`); `heapLimitReport()` says whether they
 * took effect.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import type { ResourceLimits } from 'node:worker_threads';
import { monotonicNow } from '../core/clock.js';
import { trimMalloc } from './malloc-trim.js';

/**
 * Payment worker: ledger, outbox, gateway client, Start endpoint. Its live heap stays at 12-14 MB
 * through 100,000 vends and a 10,000-row outbox drain. Young generation 3 MB = 1 MB semi-spaces.
 */
export const PAYMENT_WORKER_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 3 };

/** What the launcher passes to node for `qrvend run` (kept equal to packaging/qrvend-wrapper.sh by a test). */
export const MAIN_THREAD_NODE_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=48'] as const;

/** Kept here too for the threads' heap probes in the tests (test/daemon/resources.test.ts). */
export { threadMemory } from '../core/thread-memory.js';

/** The main isolate's heap limit in MB, and whether it is the one the launcher sets. */
export function heapLimitReport(): { heapLimitMb: number; limited: boolean } {
  const heapLimitMb = Math.round(v8.getHeapStatistics().heap_size_limit / 2 ** 20);
  const oldMb = Number(/=(\d+)$/.exec(MAIN_THREAD_NODE_FLAGS[1])?.[1]);
  // heap_size_limit = old generation + young generation, so allow the young part on top.
  return { heapLimitMb, limited: heapLimitMb <= oldMb + 16 };
}

/**
 * A thread's collection between sessions (main thread) or payments (payment worker). V8 left alone
 * grows a busy heap's committed pages towards its cap before collecting; a full collection when
 * nothing waits on the thread hands them back. The machine loop must answer a vend request within
 * a millisecond, and a Start must not wait behind a collection either, so it runs only once the
 * thread has been quiet for `quietMs`: `arm()` when a session or payment has ended, `touch()` on
 * every message to or from the other thread; the collection waits until `quietMs` have passed
 * since the last touch (a new session postpones it), then runs once. A Start reaches the payment
 * worker over HTTP, not as a message, so it meets a collection only if it arrives during the
 * collection itself (tens of ms after 2 s of silence). Without it, what a burst of
 * sessions left behind stays committed until V8 next needs a full collection, and the resting RSS
 * depends on when that was (the memory-growth figure's noise, BENCHMARKS.md). The collection
 * compacts (see compactingCollection). Then malloc's free memory goes back to the system
 * (`trim`, malloc_trim by default: malloc-trim.ts).
 */
export function quietCollector(
  quietMs: number,
  options: { minGrowthBytes?: number; committedBytes?: () => number; trim?: () => void } = {},
): { arm(): void; touch(): void; cancel(): void } {
  const minGrowthBytes = options.minGrowthBytes ?? QUIET_COLLECTION_MIN_GROWTH_BYTES;
  const trim = options.trim ?? trimMalloc;
  const committedBytes = options.committedBytes ?? (() => v8.getHeapStatistics().total_heap_size);
  let lastTouch = monotonicNow();
  let pending: NodeJS.Timeout | null = null;
  // The heap's committed size right after the last collection; null before the first.
  let committedAfterLast: number | null = null;
  const check = () => {
    // Monotonic: a wall clock stepped back must not postpone the collection by the step.
    const quietFor = monotonicNow() - lastTouch;
    if (quietFor < quietMs) {
      pending = setTimeout(check, quietMs - quietFor);
      pending.unref();
      return;
    }
    pending = null;
    // A compacting collection stalls the thread for 15-30 ms here (more on a Pi): a vend request
    // or a Start arriving then waits behind it. Only pay that when the heap has grown since the
    // last one; after an ordinary session it has not, and the collection would give nothing back.
    if (committedAfterLast === null || committedBytes() - committedAfterLast >= minGrowthBytes) {
      compactingCollection(exposedGc());
      committedAfterLast = committedBytes();
    }
    // What the session (and the collection) freed outside the V8 heap stays resident until malloc
    // is asked to give it back (malloc-trim.ts): even after a session that left the heap alone.
    // About 2 ms when there is little to give back (20 ms for 70 MB), in the same quiet moment.
    trim();
  };
  return {
    arm() {
      if (pending !== null) return;
      pending = setTimeout(check, quietMs);
      pending.unref();
    },
    touch() {
      lastTouch = monotonicNow();
    },
    cancel() {
      if (pending !== null) clearTimeout(pending);
      pending = null;
    },
  };
}

/**
 * How much a heap's committed size must have grown since the last quiet collection for the next
 * to run: small enough to keep 100,000 vends' growth under 2 MB (docs/decisions/targets.md), large enough
 * that most sessions end without a collection.
 */
export const QUIET_COLLECTION_MIN_GROWTH_BYTES = 1 << 20;

let gcFunction: (() => void) | undefined | null = null;

/**
 * This thread's `gc()`, made on first use: exposing it costs a new V8 context (about 2 ms), which
 * stays out of the cold start that way.
 */
function exposedGc(): (() => void) | undefined {
  if (gcFunction === null) {
    v8.setFlagsFromString('--expose-gc');
    gcFunction = vm.runInNewContext('gc') as (() => void) | undefined;
  }
  return gcFunction;
}

/**
 * A full collection that also compacts. An ordinary full collection frees only the pages left
 * completely empty; a heap that has churned through a burst is left with many partly used pages,
 * which stay committed (and resident): after 100,000 vends the main heap held 11.7 MB of live data
 * in 21.9 MB of pages. Compacting moves the survivors together and gives the rest back; it takes
 * longer (measured 15-30 ms instead of 11-12 ms on a fragmented 20 MB heap), which is why it runs
 * only when the thread is idle. The V8 flag is process-wide and read by each collection as it starts,
 * so it is set for this one collection and cleared again (a worker's collection that starts in
 * between also compacts, which only costs it time).
 */
export function compactingCollection(gc: (() => void) | undefined): void {
  if (typeof gc !== 'function') return;
  v8.setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc();
  } finally {
    v8.setFlagsFromString('--no-compact-on-every-full-gc');
  }
}
