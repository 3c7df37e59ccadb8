/**
 * The memory floor (docs/decisions/targets.md: the daemon's resident memory <= 1.25 x a bare Node process
 * with the same two worker threads, measured in the same run): Node started the way the launcher
 * starts `qrvend run` (its heap flags, MALLOC_ARENA_MAX=2), two idle worker threads with the
 * payment worker's heap caps, nothing else loaded. Forked by memory.ts; says {type:'ready'} over IPC.
 */
import { Worker } from 'node:worker_threads';
import { PAYMENT_WORKER_LIMITS } from '../../src/daemon/heap-limits.js';

// An idle worker: a port listener keeps it alive, nothing else runs.
const IDLE = "require('node:worker_threads').parentPort.on('message', () => {});";
const workers = [0, 1].map(() => new Worker(IDLE, { eval: true, resourceLimits: PAYMENT_WORKER_LIMITS }));
await Promise.all(workers.map((w) => new Promise((resolve) => w.once('online', resolve))));
const keepAlive = setInterval(() => {}, 1 << 30);
process.on('disconnect', () => {
  clearInterval(keepAlive);
  process.exit(0);
});
process.send?.({ type: 'ready' });
