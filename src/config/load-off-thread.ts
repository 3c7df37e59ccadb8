/**
 * loadConfig for the daemon's main thread, run in a short-lived worker (load-worker.ts) so that
 * zod and the config schema never load in the main thread, which lives as long as the agent and
 * keeps what it loaded (docs/decisions/targets.md: resident memory; BENCHMARKS.md, memory). Same answer,
 * same errors: a QrvendError comes back with its code, message, hint and details, so a refused
 * configuration still ends `qrvend run` with exit 78 naming the key.
 */
import { Worker } from 'node:worker_threads';
import { QrvendError, type ErrorCode } from '../core/errors.js';
import type { LoadedConfig } from './load.js';

export interface LoadWorkerData {
  file: string | undefined;
  setRejectedOverlayAside: boolean;
}

export type LoadWorkerAnswer =
  | { ok: true; loaded: LoadedConfig }
  /** code null: not a QrvendError (a bug); message has its stack. */
  | {
      ok: false;
      code: ErrorCode | null;
      message: string;
      hint: string | undefined;
      details: Record<string, unknown> | undefined;
    };

/** Enough for the schema and one configuration; the worker ends right after. */
const LOAD_WORKER_LIMITS = { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 };

export function loadConfigOffThread(options: LoadWorkerData): Promise<LoadedConfig> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const worker = new Worker(new URL('./load-worker.js', import.meta.url), {
      workerData: options satisfies LoadWorkerData,
      resourceLimits: LOAD_WORKER_LIMITS,
    });
    worker.once('message', (answer: LoadWorkerAnswer) => {
      answered = true;
      if (answer.ok) resolve(answer.loaded);
      else if (answer.code === null) reject(new Error(`loading the configuration failed: ${answer.message}`));
      else reject(new QrvendError(answer.code, answer.message, { hint: answer.hint, details: answer.details }));
    });
    worker.once('error', (err) => {
      answered = true;
      reject(err);
    });
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`the configuration loader exited (code ${code}) without an answer`));
    });
  });
}
