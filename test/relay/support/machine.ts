/**
 * A machine's payment side without the daemon around it: a real SQLite ledger in a temporary
 * directory, the real PaymentService and Static QR flow, the real Start decisions (core.ts) shared
 * by the HTTP endpoint on loopback and the relayed path (relayed.ts). The gateway is a stub that
 * approves every Authorization (the gateway is not under test here; the e2e tests use the simulator).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config/load.js';
import { silentLogger, type Logger } from '../../../src/core/log.js';
import { createRequestBuilders } from '../../../src/gateway/envelope.js';
import { openLedger, type Ledger } from '../../../src/ledger/index.js';
import { outboxBodies } from '../../../src/flows/bodies.js';
import { realTimers, type FlowContext } from '../../../src/flows/context.js';
import { PaymentService } from '../../../src/flows/payment-service.js';
import type { PaymentToMain } from '../../../src/ipc/messages.js';
import { createRelayedStart, createStartCore, startStartEndpoint, type RelayedStartHandler, type StartCore, type StartEndpoint } from '../../../src/start/index.js';

export interface TestMachine {
  readonly terminalId: string;
  readonly uniQr: string;
  readonly integratorName: string;
  readonly token: string;
  readonly ledger: Ledger;
  readonly core: StartCore;
  readonly relayed: RelayedStartHandler;
  readonly endpoint: StartEndpoint | null;
  /** Messages the payment side sent to the machine loop (session.begin = a session would open). */
  readonly sent: PaymentToMain[];
  /** Authorizations the stub gateway received. */
  readonly authorizations: string[];
  close(): Promise<void>;
}

export interface TestMachineOptions {
  terminalId: string;
  uniQr: string;
  token: string;
  integratorName?: string;
  /** Serve the HTTP endpoint on 127.0.0.1 too (default true). */
  listen?: boolean;
  wallNow?: () => number;
  monotonicNow?: () => number;
  log?: Logger;
  rateLimit?: { perSecond: number; burst: number };
}

export async function createTestMachine(options: TestMachineOptions): Promise<TestMachine> {
  const { config } = loadConfig({ env: {} });
  const integratorName = options.integratorName ?? 'acme-wallet';
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-relay-machine-'));
  const ledger = openLedger({ path: join(dir, 'ledger.sqlite'), decimalPlaces: 2 });
  const sent: PaymentToMain[] = [];
  const authorizations: string[] = [];
  const builders = createRequestBuilders(config, { hwSerial: 'HW', fwVersion: 'test', type: 'qrvend' });
  const log = options.log ?? silentLogger();
  const ctx: FlowContext = {
    ledger,
    gateway: {
      authorization: async (request: { BasicInfo: { TransactionId: string } }) => {
        authorizations.push(request.BasicInfo.TransactionId);
        return { kind: 'approved', response: { PaymentInfo: { AuthAmount: 5 }, Status: { Verdict: 'Approved' } }, elapsedMs: 1 };
      },
      generateQR: async () => {
        throw new Error('no GenerateQR here');
      },
      inquiry: async () => {
        throw new Error('no Inquiry here');
      },
    } as unknown as FlowContext['gateway'],
    builders: () => builders,
    bodies: outboxBodies(() => builders, { preauthAmount: 5, decimalPlaces: 2 }),
    toMain: (m) => sent.push(m),
    show: () => {},
    outboxChanged: () => {},
    settings: { preauthAmount: 5, decimalPlaces: 2, currencyCode: 'EUR', paymentTimeoutMs: 10_000, pollIntervalMs: 1000, uniQr: options.uniQr, staticAgeLimit: null },
    log,
    now: Date.now,
    timers: realTimers,
  };
  const service = new PaymentService(ctx);
  service.handle({ type: 'reader.status', status: 'enabled', txId: null });
  const start = {
    ...config.start,
    listen: options.listen === false ? null : '127.0.0.1:0',
    integratorName,
    rateLimit: options.rateLimit ?? { perSecond: 1000, burst: 1000 },
  };
  const common = {
    start,
    acceptedTerminalIds: [options.terminalId],
    acceptedUniQr: [options.uniQr],
    secretToken: Buffer.from(options.token),
    hooks: service.startHooks(),
    log,
  };
  const core = createStartCore(common);
  const relayed = createRelayedStart({ core, ...(options.wallNow ? { wallNow: options.wallNow } : {}), ...(options.monotonicNow ? { monotonicNow: options.monotonicNow } : {}) });
  let endpoint: StartEndpoint | null = null;
  try {
    endpoint = start.listen === null ? null : await startStartEndpoint({ ...common, core });
  } catch (err) {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    terminalId: options.terminalId,
    uniQr: options.uniQr,
    integratorName,
    token: options.token,
    ledger,
    core,
    relayed,
    endpoint,
    sent,
    authorizations,
    async close() {
      service.stop();
      await endpoint?.close();
      // Let an Authorization scheduled by the last accept finish before the ledger closes.
      await new Promise((r) => setTimeout(r, 20));
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
