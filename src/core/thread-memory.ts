/**
 * This thread's V8 heap, for the daemon's `stats` log line. Every thread reports it (the main
 * thread, the payment, display and fleet workers), so it lives in the lowest layer they all reach;
 * the heap caps themselves are the daemon's (src/daemon/heap-limits.ts).
 */
import v8 from 'node:v8';

/** One thread's heap as the stats line prints it. */
export interface ThreadMemory {
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
}

/** This thread's heap, for the stats line. */
export function threadMemory(): ThreadMemory {
  const h = v8.getHeapStatistics();
  return { heapUsedBytes: h.used_heap_size, heapTotalBytes: h.total_heap_size, externalBytes: h.external_memory };
}
