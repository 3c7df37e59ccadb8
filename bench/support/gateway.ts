/**
 * Parent side of the gateway simulator process (gateway-process.ts): start it, steer its delay,
 * read its ledger summary, stop it. Also: authorize many transactions at it, which a Settlement
 * needs first (the simulator declines a Settlement of a TransactionId it never authorized).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stopForkedChild } from './child-stop.js';
import type { QrvendConfig } from '../../src/config/schema.js';
import { createGatewayClient, type GatewayClient } from '../../src/gateway/client.js';
import { receivedPaymentInfo } from '../../src/gateway/wire/index.js';
import { createRequestBuilders, type DeviceFacts, type RequestBuilders } from '../../src/gateway/envelope.js';
import type { LedgerView } from '../../src/sim/gateway/index.js';

export type GatewaySummary = LedgerView['summary'];

export class GatewayProcess {
  private constructor(
    private readonly child: ChildProcess,
    /** The simulator itself. */
    readonly url: string,
    /** The delaying proxy in front of it. */
    readonly slowUrl: string,
  ) {}

  static async start(): Promise<GatewayProcess> {
    const script = fileURLToPath(new URL('./gateway-process.js', import.meta.url));
    const child = fork(script, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const ready = await new Promise<{ url: string; slowUrl: string }>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('the gateway simulator process did not start within 10 s')),
        10_000,
      );
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`the gateway simulator process exited with ${code}`)));
      child.on('message', (m: { type: string; url?: string; slowUrl?: string }) => {
        if (m.type === 'ready') {
          clearTimeout(timer);
          resolve({ url: m.url!, slowUrl: m.slowUrl! });
        }
      });
    });
    child.removeAllListeners('exit');
    return new GatewayProcess(child, ready.url, ready.slowUrl);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  setDelay(ms: number): void {
    this.child.send({ type: 'delay', ms });
  }

  summary(): Promise<GatewaySummary> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no summary from the gateway simulator within 10 s')), 10_000);
      const onMessage = (m: { type: string; summary?: GatewaySummary }) => {
        if (m.type !== 'summary') return;
        clearTimeout(timer);
        this.child.off('message', onMessage);
        resolve(m.summary!);
      };
      this.child.on('message', onMessage);
      this.child.send({ type: 'summary' });
    });
  }

  stop(): Promise<void> {
    return stopForkedChild(this.child);
  }
}

/** Device facts for request bodies built by the bench (the daemon reads its own). */
export const BENCH_DEVICE: DeviceFacts = { hwSerial: 'BENCH0000000001', fwVersion: 'bench', type: 'qrvend' };

export function benchBuilders(config: QrvendConfig): RequestBuilders {
  return createRequestBuilders(config, BENCH_DEVICE);
}

export function benchClient(url: string): GatewayClient {
  return createGatewayClient({ baseUrl: url, timeoutMs: 30_000, connectTimeoutMs: 5_000 });
}

/**
 * Authorizes every TransactionId (at most `parallel` in flight); returns the PaymentInfo of each as
 * the exact text the gateway sent (it must go back byte for byte: `10.00` stays `10.00`).
 */
export async function authorizeAll(
  client: GatewayClient,
  builders: RequestBuilders,
  txIds: readonly string[],
  amount: number,
  parallel = 16,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < txIds.length) {
      const txId = txIds[next++]!;
      const outcome = await client.authorization(builders.authorization({ txId, amount }));
      const paymentInfo = outcome.kind === 'approved' ? receivedPaymentInfo(outcome) : null;
      if (paymentInfo === null) {
        throw new Error(`Authorization of ${txId} was not approved by the simulator (${outcome.kind})`);
      }
      out.set(txId, paymentInfo.text);
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return out;
}
