/**
 * A pass-through in front of the gateway simulator, on loopback, that notes when each request
 * arrived whole and when its answer was handed back (in performance.now() of the bench's main
 * thread, the clock the VMC end of the pty is read with). The daemon's share of the consumer's wait
 * is measured between these and the pty, from outside the daemon. The proxy runs in a thread of its
 * own (timing-proxy-thread.ts), so the bench's main loop (the wallet, the VMC simulator, the
 * daemon's log lines) does not delay the moment a request is noted.
 */
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { ProxyThreadMessage } from './timing-proxy-thread.js';

export interface TimedExchange {
  op: string;
  /** TransactionId of the request (BasicInfo.TransactionId), '' when absent. */
  txId: string;
  receivedAtMs: number;
  answeredAtMs: number | null;
  responseText: string | null;
}

export interface TimingProxy {
  url: string;
  exchanges: TimedExchange[];
  /** The first exchange matching `match` once its answer was handed back; rejects after `timeoutMs`. */
  answered(match: (e: TimedExchange) => boolean, timeoutMs: number, what: string): Promise<TimedExchange>;
  close(): Promise<void>;
}

export async function startTimingProxy(upstreamUrl: string): Promise<TimingProxy> {
  // process.hrtime and performance.now() read the same monotonic clock: a fixed offset apart.
  const offsetMs = Number(process.hrtime.bigint()) / 1e6 - performance.now();
  const exchanges: TimedExchange[] = [];
  const byId = new Map<number, TimedExchange>();
  const waiters = new Set<() => void>();
  const worker = new Worker(new URL('./timing-proxy-thread.js', import.meta.url), { workerData: { upstreamUrl } });
  let closed: (() => void) | null = null;
  const listening = new Promise<number>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (m: ProxyThreadMessage) => {
      if (m.kind === 'listening') resolve(m.port);
      else if (m.kind === 'received') {
        const ex: TimedExchange = {
          op: m.op,
          txId: m.txId,
          receivedAtMs: m.atHrMs - offsetMs,
          answeredAtMs: null,
          responseText: null,
        };
        byId.set(m.id, ex);
        exchanges.push(ex);
      } else if (m.kind === 'answered') {
        const ex = byId.get(m.id);
        if (ex === undefined) return;
        byId.delete(m.id);
        ex.answeredAtMs = m.atHrMs - offsetMs;
        ex.responseText = m.responseText;
        for (const w of [...waiters]) w();
      } else if (m.kind === 'closed') closed?.();
    });
  });
  const port = await listening;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    answered: (match, timeoutMs, what) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = exchanges.find((e) => e.answeredAtMs !== null && match(e));
          if (found === undefined) return false;
          clearTimeout(timer);
          waiters.delete(onAnswer);
          resolve(found);
          return true;
        };
        const onAnswer = (): void => void check();
        const timer = setTimeout(() => {
          waiters.delete(onAnswer);
          reject(new Error(`${what} was not seen answered at the gateway within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(onAnswer);
        check();
      }),
    close: async () => {
      const done = new Promise<void>((resolve) => (closed = resolve));
      worker.postMessage({ kind: 'close' });
      const timer = setTimeout(() => void worker.terminate(), 3000);
      await Promise.race([done, once(worker, 'exit')]);
      clearTimeout(timer);
      await worker.terminate();
    },
  };
}
