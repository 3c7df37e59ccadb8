/**
 * The stack floor (BENCHMARKS.md, docs/decisions/smallest-boards.md item 3): the bare floor (memory-floor.ts) plus the
 * libraries the daemon is made of, loaded and used once in the threads that use them, and none of
 * qrvend's own code. The main thread: serialport's port class and binding, pino. One worker with
 * the payment worker's caps: better-sqlite3, got, zod, pino (memory-stack-floor-worker.ts). One
 * idle worker, as in the bare floor. What the daemon holds beyond this is qrvend's own; what this
 * holds beyond the bare floor is the stack's. Forked by memory.ts with the launcher's flags; says
 * {type:'ready'} over IPC once both workers are done. Arguments name libraries to leave out of the
 * worker (better-sqlite3, got, zod, pino), for what each one costs (BENCHMARKS.md).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { pino } from 'pino';
import { SerialPort } from 'serialport';
import { PAYMENT_WORKER_LIMITS, quietCollector } from '../../src/daemon/heap-limits.js';
import type { StackLibrary } from './memory-stack-floor-worker.js';

const dir = mkdtempSync(join(tmpdir(), 'qrvend-stack-floor-'));
// Opening a port needs a device; the class and its native binding are what the main thread loads.
const port = new SerialPort({ path: '/dev/null', baudRate: 115200, autoOpen: false });
pino(pino.destination('/dev/null')).info({ port: port.path }, 'stack floor: main thread');
const IDLE = "require('node:worker_threads').parentPort.on('message', () => {});";
const without = process.argv.slice(2) as StackLibrary[];
const stack = new Worker(new URL('./memory-stack-floor-worker.js', import.meta.url), {
  workerData: { dir, without },
  resourceLimits: PAYMENT_WORKER_LIMITS,
});
const idle = new Worker(IDLE, { eval: true, resourceLimits: PAYMENT_WORKER_LIMITS });
await Promise.all([
  new Promise((resolve, reject) => {
    stack.once('message', resolve);
    stack.once('error', reject);
  }),
  new Promise((resolve) => idle.once('online', resolve)),
]);
quietCollector(0).arm();
const keepAlive = setInterval(() => {}, 1 << 30);
const end = () => {
  clearInterval(keepAlive);
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.on('disconnect', end);
process.on('SIGTERM', end);
process.send?.({ type: 'ready' });
