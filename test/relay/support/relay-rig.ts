/**
 * The relay's test rig: a real MQTT broker on loopback (startTestBroker: aedes, or mosquitto with
 * QRVEND_TEST_BROKER=mosquitto), `qrvend relay` in-process with a captured log, and a small HTTP
 * client for the Start path. Everything it starts is torn down by close(), even after a failure.
 */
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/core/log.js';
import { startTestBroker, type TestBroker } from '../../../rigs/broker/index.js';
import { startRelay, validateRelayConfig, type Relay } from '../../../src/relay/index.js';
import { createTrustKit, type TrustKit } from '../../../rigs/relay/trust-kit.js';
import type { RegistryMachine } from '../../../src/relay/registry.js';

export interface RelayRig {
  broker: TestBroker;
  /** Keys, registry, trust files and the integrator's token (kit.token is the SecretToken). */
  kit: TrustKit;
  relays: Relay[];
  logs: string[];
  /** Protocol the relay and simulated machines speak: 5 when the broker can, else 4. */
  protocolVersion: 4 | 5;
  startRelay(overrides?: Record<string, unknown>): Promise<Relay>;
  close(): Promise<void>;
}

/** `machines`: the operator's registry (machineId, terminalId, uniQr); `token`: the integrator's SecretToken. */
export async function createRelayRig(
  options: { machines?: readonly RegistryMachine[]; token?: string; integratorName?: string } = {},
): Promise<RelayRig> {
  const kit = createTrustKit({
    machines: options.machines ?? [],
    ...(options.token !== undefined ? { token: options.token } : {}),
    ...(options.integratorName !== undefined ? { integratorName: options.integratorName } : {}),
  });
  const broker = await startTestBroker();
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _e, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const log = createLogger({ level: 'debug', destination });
  const protocolVersion: 4 | 5 = broker.protocolVersions.includes(5) ? 5 : 4;
  const relays: Relay[] = [];
  return {
    broker,
    kit,
    relays,
    logs,
    protocolVersion,
    async startRelay(overrides = {}) {
      const config = validateRelayConfig(
        {
          relay: {
            listen: '127.0.0.1:0',
            broker: { url: broker.url, protocolVersion },
            timeoutMs: 2_000,
            rateLimit: { perSecond: 1000, burst: 1000 },
            ...kit.relayConfig(),
            ...overrides,
          },
        },
        'test',
      );
      const relay = await startRelay(config, log);
      relays.push(relay);
      return relay;
    },
    async close() {
      for (const relay of relays.splice(0)) await relay.close().catch(() => {});
      await broker.close();
      kit.remove();
    },
  };
}

export interface HttpReply {
  status: number;
  contentType: string | undefined;
  retryAfter: string | undefined;
  text: string;
  json: { Status: { Verdict: string; Code?: number; StatusMessage?: string }; TransactionId?: string };
}

export function postStart(
  origin: string,
  body: string | Buffer,
  options: { integratorName?: string; path?: string; contentType?: string } = {},
): Promise<HttpReply> {
  const path = options.path ?? `/payment/v2/transactions/Gateway/${options.integratorName ?? 'acme-wallet'}/start`;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(path, origin),
      {
        method: 'POST',
        headers: {
          'content-type': options.contentType ?? 'application/json',
          'content-length': Buffer.byteLength(body),
        },
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({
              status: res.statusCode ?? 0,
              contentType: res.headers['content-type'],
              retryAfter: res.headers['retry-after'],
              text,
              json: JSON.parse(text),
            });
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

export async function getJson(
  origin: string,
  path: string,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(new URL(path, origin), { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

export async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
