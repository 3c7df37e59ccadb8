/**
 * A short-lived worker that loads and validates the configuration for the daemon's main thread
 * (load-off-thread.ts). The config schema and zod stay in this isolate, which ends as soon as it
 * has answered: the main thread gets the checked plain object and never loads them (about 5 MB of
 * heap it would keep for the process's life; BENCHMARKS.md, memory).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isQrvendError } from '../core/errors.js';
import { loadConfig } from './load.js';
import type { LoadWorkerAnswer, LoadWorkerData } from './load-off-thread.js';

const { file, setRejectedOverlayAside } = workerData as LoadWorkerData;
let answer: LoadWorkerAnswer;
try {
  answer = { ok: true, loaded: loadConfig({ file, setRejectedOverlayAside }) };
} catch (err) {
  answer = isQrvendError(err)
    ? { ok: false, code: err.code, message: err.message, hint: err.hint, details: err.details }
    : { ok: false, code: null, message: (err as Error)?.stack ?? String(err), hint: undefined, details: undefined };
}
parentPort!.postMessage(answer);
