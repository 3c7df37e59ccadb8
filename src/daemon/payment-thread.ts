/**
 * The payment worker as the main thread holds it: messages posted before the thread exists (the
 * fleet link's first observations) wait for it, and the stop sequence waits for its `stopped`
 * (or its exit) before terminating it (docs/architecture.md, the threads).
 */
import { Worker, type TransferListItem } from 'node:worker_threads';
import type { MainToPayment, PaymentToMain } from '../ipc/messages.js';
import { PAYMENT_WORKER_LIMITS } from './heap-limits.js';
import type { PaymentWorkerData } from './payment-worker.js';

export interface PaymentThreadEvents {
  message(message: PaymentToMain): void;
  error(err: Error): void;
  exit(code: number): void;
}

export class PaymentThread {
  private worker: Worker | null = null;
  private readonly beforeWorker: MainToPayment[] = [];
  private gone = false;
  private onStopped: (() => void) | null = null;

  /** Posts now, or once the worker exists. */
  post(message: MainToPayment): void {
    if (this.worker) this.worker.postMessage(message);
    else this.beforeWorker.push(message);
  }

  spawn(workerData: PaymentWorkerData, transferList: TransferListItem[], events: PaymentThreadEvents): void {
    const worker = new Worker(new URL('./payment-worker.js', import.meta.url), {
      workerData,
      transferList,
      resourceLimits: PAYMENT_WORKER_LIMITS,
    });
    this.worker = worker;
    for (const message of this.beforeWorker.splice(0)) worker.postMessage(message);
    worker.on('message', events.message);
    worker.on('error', events.error);
    worker.on('exit', (code: number) => {
      this.gone = true;
      this.onStopped?.();
      events.exit(code);
    });
  }

  /** The worker said `stopped` (its shutdown finished). */
  stopped(): void {
    this.onStopped?.();
  }

  /** Sends the shutdown through `sendShutdown`; false when the worker did not stop within timeoutMs. */
  async shutdown(sendShutdown: () => void, timeoutMs: number): Promise<boolean> {
    const stopped = this.gone ? Promise.resolve() : new Promise<void>((resolve) => (this.onStopped = resolve));
    sendShutdown();
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref());
    const inTime = (await Promise.race([stopped, timeout])) !== 'timeout';
    await this.worker?.terminate();
    return inTime;
  }
}
