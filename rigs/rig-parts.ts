/**
 * What the two daemon rigs share: the process rig (rigs/rig.ts: `qrvend run` over a pty pair) and
 * the in-process rig (rigs/in-process-rig.ts: the same daemon wiring on the in-memory wire). Both
 * stand the agent between the same simulators with the same site configuration, identity and
 * SecretToken, undo a set-up that fails half-way, and remove their scratch directory if this
 * process ends before the rig was closed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { GatewaySimulator } from '../src/sim/gateway/index.js';
import type { VmcSimulator, VmcSimulatorOptions } from '../src/sim/vmc/index.js';
import { sendStart, type StartResult } from '../src/sim/wallet/index.js';
import { layer } from '../src/config/load.js';
import type { BoardCommand } from '../src/mdb/codec/index.js';
import { atProcessEnd } from '../src/sim/process-end.js';
import type { AgentExit, AgentHandle } from './agent-log.js';

export type Json = Parameters<typeof layer>[0];

/**
 * How long startAgent() lets the daemon take to be ready: a deadline, not a speed check. A bench
 * was ready in 5 to 8 s on the shared 2-core machine (load average 16), in 17 to 24 s with one busy
 * loop per core beside it (scripts/stress-suite, docs/testing.md), past the former 15 s.
 */
export const AGENT_START_DEADLINE_MS = 60_000;

export interface RigStartOptions {
  terminalId?: string;
  uniQr?: string;
  balance?: number;
  transactionId?: string;
  secretToken?: string;
}

/** A daemon between the simulators, whichever way it runs. */
export interface AgentRig<A extends AgentHandle = AgentHandle> {
  readonly dir: string;
  readonly configFile: string;
  /** The fleet's configuration overlay (fleet.configOverlay, in the rig's state directory). */
  readonly overlayFile: string;
  readonly secretToken: string;
  readonly integratorName: string;
  readonly terminalId: string;
  readonly uniQr: string;
  readonly gateway: GatewaySimulator;
  readonly vmc: VmcSimulator;
  agent: A | null;
  /** Starts the daemon and waits for the payment worker to be ready and the reader enabled. */
  startAgent(timeoutMs?: number): Promise<A>;
  /** Stops the daemon (see each rig for the signals it takes); resolves when it is gone. */
  stopAgent(signal?: NodeJS.Signals): Promise<AgentExit>;
  /** A Start from the wallet simulator to the running daemon's endpoint. */
  start(options?: RigStartOptions): Promise<StartResult>;
  /** The next host command the VMC receives that matches. */
  nextCommand(match: (c: BoardCommand) => boolean, timeoutMs: number, what: string): Promise<BoardCommand>;
  close(): Promise<void>;
}

export interface RigOptionsBase {
  /** Site-config overrides layered over the rig's defaults (which are layered over config/default.json). */
  config?: Json;
  vmc?: VmcSimulatorOptions;
  gatewaySeed?: number;
  /** Keep the temp dir (ledger, config) after close(), for a post-mortem. */
  keepDir?: boolean;
}

/** Steps to undo, last first: a set-up that fails half-way, and close(). Each runs even when one fails. */
export class Teardown {
  private readonly steps: Array<() => unknown> = [];

  push(step: () => unknown): void {
    this.steps.push(step);
  }

  async undo(): Promise<Error[]> {
    const errors: Error[] = [];
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch (err) {
        errors.push(err as Error);
      }
    }
    return errors;
  }

  /** close(): undo everything, one error for all that failed. */
  async close(): Promise<void> {
    const errors = await this.undo();
    if (errors.length > 0) throw new AggregateError(errors, `rig close: ${errors.map((e) => e.message).join('; ')}`);
  }
}

/** Scratch directories of rigs not closed yet: gone if this process ends first. */
const liveDirs = new Set<string>();
let dirsGuarded = false;

/**
 * The rig's scratch directory, removed on undo (unless kept) and if the process ends first: after
 * the daemon processes are killed (rigs/rig.ts registers that when it loads, before this runs).
 */
export function scratchDir(teardown: Teardown, keepDir: boolean | undefined): string {
  if (!dirsGuarded) {
    dirsGuarded = true;
    atProcessEnd(() => {
      for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
    });
  }
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-rig-'));
  if (!keepDir) liveDirs.add(dir);
  teardown.push(() => {
    if (!keepDir) rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
  });
  return dir;
}

/** Who the rig's machine is, and the SecretToken the wallet simulator signs its Starts with. */
export interface RigIdentity {
  readonly secretToken: string;
  readonly tokenFile: string;
  readonly integratorName: string;
  readonly terminalId: string;
  readonly uniQr: string;
}

export function writeIdentity(dir: string): RigIdentity {
  const secretToken = randomBytes(32).toString('hex');
  const tokenFile = join(dir, 'secret-token');
  writeFileSync(tokenFile, `${secretToken}\n`, { mode: 0o600 });
  return { secretToken, tokenFile, integratorName: 'rig-wallet', terminalId: 'RIG-TERMINAL-1', uniQr: 'RIG-UNIQR-1' };
}

/** The rig's site configuration, written to `config.json` in its directory; `mdbPort` is a pty path or "sim". */
export function writeSiteConfig(
  dir: string,
  id: RigIdentity,
  gatewayUrl: string,
  mdbPort: string,
  overrides: Json = {},
): { configFile: string; overlayFile: string } {
  const base: Json = {
    gateway: { baseUrl: gatewayUrl, timeoutMs: 2000, connectTimeoutMs: 1000 },
    start: {
      listen: '127.0.0.1:0',
      integratorName: id.integratorName,
      secretTokenFile: id.tokenFile,
      rateLimit: { perSecond: 1000, burst: 1000 },
    },
    machine: { terminalId: id.terminalId, uniQr: id.uniQr },
    device: { hwSerial: 'RIG-HW-1' },
    mdb: {
      port: mdbPort,
      linkWatchdogMs: 1000,
      reopenMinMs: 50,
      reopenMaxMs: 500,
      sessionIdleTimeoutMs: 30_000,
      vendResultTimeoutMs: 30_000,
    },
    store: { path: join(dir, 'ledger.sqlite'), backoffBaseMs: 50, backoffCapMs: 500 },
    staticQr: { preauthAmount: 10 },
    dynamicQr: { pollIntervalMs: 100, paymentTimeoutMs: 5000 },
    gpio: { mode: 'off' },
    log: { level: 'info', statsIntervalMs: 0 },
    // The rig's own state directory, never the machine's /var/lib/qrvend.
    fleet: { configOverlay: join(dir, 'state', 'fleet-config.json') },
  };
  const siteConfig = layer(base, overrides);
  const configFile = join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify(siteConfig, null, 2));
  return { configFile, overlayFile: (siteConfig as { fleet: { configOverlay: string } }).fleet.configOverlay };
}

/** A Start from the wallet simulator to the agent's endpoint at `origin` (null: the agent is not running). */
export function sendRigStart(origin: string | null, id: RigIdentity, opts: RigStartOptions): Promise<StartResult> {
  if (!origin) return Promise.reject(new Error('the agent is not running (no Start endpoint)'));
  return sendStart({
    url: origin,
    integratorName: id.integratorName,
    secretToken: opts.secretToken ?? id.secretToken,
    ...(opts.uniQr !== undefined ? { uniQr: opts.uniQr } : { terminalId: opts.terminalId ?? id.terminalId }),
    ...(opts.balance !== undefined ? { balance: opts.balance } : {}),
    ...(opts.transactionId !== undefined ? { transactionId: opts.transactionId } : {}),
    timeoutMs: 5000,
  });
}
