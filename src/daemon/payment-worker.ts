/**
 * The payment worker thread's entry (docs/architecture.md, the threads): constructs its owner,
 * PaymentWorker (src/daemon/payment-worker-owner.ts), and starts it.
 */
// First: it must run before the libraries below are evaluated.
import './payment-worker-preload.js';
import { parentPort, workerData } from 'node:worker_threads';
import { PaymentWorker } from './payment-worker-owner.js';
import type { PaymentWorkerData } from './payment-start-up.js';

export type { PaymentWorkerData } from './payment-start-up.js';

new PaymentWorker(workerData as PaymentWorkerData, parentPort!).start();
