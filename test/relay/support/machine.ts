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
import {
  createRelayedStart,
  createStartCore,
  RelayVouchers,
  startStartEndpoint,
  type RelayedStartOutcome,
  type RelayedStarts,
  type StartCore,
  type StartEndpoint,
} from '../../../src/start/index.js';
import type { Keyring } from '../../../src/trust/index.js';
import type { VoucherSigner } from '../../../src/relay/voucher.js';

export interface TestMachine {
  readonly terminalId: string;
  readonly uniQr: string;
  readonly integratorName: string;
  readonly token: string;
  readonly ledger: Ledger;
  readonly core: StartCore;
  readonly relayed: RelayedStarts;
  /**
   * What `qrvend relay` sends for a Start: the body without its SecretToken, vouched for with the
   * kit's relay key (deadlineAt from the args, default 5 s ahead). Only with options.signer.
   */
  relay(args: {
    integratorName?: string;
    body: string;
    deadlineAt?: number;
    client?: string;
  }): Promise<RelayedStartOutcome>;
  /** The relay's confirmation of the last Start relayed with relay() for `txId`. */
  confirm(txId: string): ReturnType<RelayedStarts['confirm']>;
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
  /** The relay keys this machine trusts (fleet.trustFile); null = none. */
  keyring?: Keyring | null;
  /** The relay's signer, for relay() and confirm(). */
  signer?: VoucherSigner;
  /** fleet.machineId (default the TerminalId). */
  machineId?: string;
  confirmGraceMs?: number;
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
        return {
          kind: 'approved',
          response: { PaymentInfo: { AuthAmount: 5 }, Status: { Verdict: 'Approved' } },
          elapsedMs: 1,
        };
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
    settings: {
      preauthAmount: 5,
      decimalPlaces: 2,
      currencyCode: 'EUR',
      paymentTimeoutMs: 10_000,
      pollIntervalMs: 1000,
      uniQr: options.uniQr,
      staticAgeLimit: null,
      readerGraceMs: 30_000,
    },
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
  const machineId = options.machineId ?? options.terminalId;
  const vouchers = new RelayVouchers(options.keyring ?? null, machineId);
  const relayed = createRelayedStart({
    core,
    vouchers,
    ...(options.wallNow ? { wallNow: options.wallNow } : {}),
    ...(options.monotonicNow ? { monotonicNow: options.monotonicNow } : {}),
    ...(options.confirmGraceMs !== undefined ? { confirmGraceMs: options.confirmGraceMs } : {}),
  });
  const nonces = new Map<string, string>();
  const relay: TestMachine['relay'] = (a) => {
    if (!options.signer) throw new Error('relay() needs options.signer');
    const { SecretToken: _t, ...rest } = JSON.parse(a.body) as Record<string, unknown>;
    // The relay's clock is the real one; options.wallNow is the machine's.
    const deadlineAt = a.deadlineAt ?? Date.now() + 5_000;
    const timeoutMs = Math.max(1, deadlineAt - Date.now());
    const signed = options.signer.start(
      machineId,
      {
        integratorName: a.integratorName ?? integratorName,
        body: JSON.stringify(rest),
        client: a.client ?? '203.0.113.7',
      },
      timeoutMs,
      deadlineAt - timeoutMs,
    );
    if (typeof rest['TransactionId'] === 'string') nonces.set(rest['TransactionId'], signed.voucher.nonce);
    return relayed.start(signed);
  };
  const confirm: TestMachine['confirm'] = (txId) =>
    relayed.confirm(options.signer!.confirm(machineId, txId, nonces.get(txId) ?? 'none', Date.now()));
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
    relay,
    confirm,
    endpoint,
    sent,
    authorizations,
    async close() {
      relayed.dropAll('test over');
      service.stop();
      await endpoint?.close();
      // Let an Authorization scheduled by the last accept finish before the ledger closes.
      await new Promise((r) => setTimeout(r, 20));
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
