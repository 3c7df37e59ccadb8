/**
 * A bench rig: the real daemon process (`qrvend run`) wired to the simulators exactly as a
 * machine in the field is wired to the real things: the gateway simulator on loopback HTTP, the
 * VMC simulator on the other end of a pseudo-terminal pair (src/sim/pty-pair.ts), and the wallet
 * simulator for Start. End-to-end tests, the crash test, the chaos run and the benchmarks all
 * stand on it. A set-up that fails half-way takes down what it had started before it rejects, and
 * every daemon process a rig spawned is killed when this process exits, so a failing or timed-out
 * test leaves nothing running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { startGatewaySimulator, type GatewaySimulator } from '../src/sim/gateway/index.js';
import { VmcSimulator, type VmcSimulatorOptions } from '../src/sim/vmc/index.js';
import { sendStart, type StartResult } from '../src/sim/wallet/index.js';
import { createPtyPair, type PtyPair } from '../src/sim/pty-pair.js';
import { openSerialLink } from '../src/mdb/transport/index.js';
import { layer } from '../src/config/load.js';
import type { BoardCommand } from '../src/mdb/codec/index.js';
import { nextCommand } from '../src/sim/wait.js';
import { atProcessEnd } from '../src/sim/process-end.js';

export { until } from '../src/sim/wait.js';

const MAIN_JS = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

type Json = Parameters<typeof layer>[0];

/**
 * How long startAgent() lets the daemon take to be ready: a deadline, not a speed check. A bench
 * was ready in 5 to 8 s on the shared 2-core machine (load average 16), in 17 to 24 s with one busy
 * loop per core beside it (scripts/stress-suite, docs/testing.md), past the former 15 s.
 */
export const AGENT_START_DEADLINE_MS = 60_000;

export interface RigOptions {
  /** Site-config overrides layered over the rig's defaults (which are layered over config/default.json). */
  config?: Json;
  vmc?: VmcSimulatorOptions;
  gatewaySeed?: number;
  /** Keep the temp dir (ledger, config) after close(), for a post-mortem. */
  keepDir?: boolean;
  /** Makes the serial line between daemon and VMC (default: createPtyPair()). */
  ptyPair?: () => Promise<PtyPair>;
  /** Extra environment of the daemon process (e.g. the test clock, src/core/clock.ts). */
  env?: NodeJS.ProcessEnv;
}

/** Daemon processes and scratch directories of rigs not closed yet: gone if this process ends first. */
const liveAgents = new Set<ChildProcess>();
const liveDirs = new Set<string>();
atProcessEnd(() => {
  for (const child of liveAgents) child.kill('SIGKILL');
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
});

export interface LogLine {
  level: string;
  msg: string;
  [key: string]: unknown;
}

export interface AgentProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Every NDJSON log line so far (non-JSON stdout lines are kept as { level: 'raw', msg }). */
  readonly logs: LogLine[];
  readonly stderr: string[];
  /** The Start endpoint's origin (scheme://host:port), known once the payment worker is ready. */
  startOrigin: string | null;
  /** Settles once the process exited and its stdout/stderr were read to the end (so `logs` is complete). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitForLog(match: (line: LogLine) => boolean, timeoutMs: number, what?: string): Promise<LogLine>;
}

export interface Rig {
  readonly dir: string;
  readonly configFile: string;
  /** The fleet's configuration overlay (fleet.configOverlay, in the rig's state directory). */
  readonly overlayFile: string;
  readonly secretToken: string;
  readonly integratorName: string;
  readonly terminalId: string;
  readonly uniQr: string;
  readonly gateway: GatewaySimulator;
  readonly pty: PtyPair;
  readonly vmc: VmcSimulator;
  agent: AgentProcess | null;
  /** Spawns `qrvend run` and waits for the payment worker to be ready and the reader enabled. */
  startAgent(timeoutMs?: number): Promise<AgentProcess>;
  /** Spawns `qrvend run` without waiting for anything (for tests of a start that does not go well). */
  startAgentProcessOnly(): Promise<AgentProcess>;
  /** SIGTERM (graceful) or SIGKILL (crash); resolves when the process is gone. */
  stopAgent(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  start(options?: {
    terminalId?: string;
    uniQr?: string;
    balance?: number;
    transactionId?: string;
    secretToken?: string;
  }): Promise<StartResult>;
  /** The next host command the VMC receives that matches. */
  nextCommand(match: (c: BoardCommand) => boolean, timeoutMs: number, what: string): Promise<BoardCommand>;
  /** Re-attaches the VMC simulator to the pty (after pty.replug()). */
  reattachVmc(): Promise<void>;
  close(): Promise<void>;
}

export function spawnAgent(configFile: string, env: NodeJS.ProcessEnv): AgentProcess {
  const child = spawn(process.execPath, [MAIN_JS, 'run', '--config', configFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  liveAgents.add(child);
  child.once('exit', () => liveAgents.delete(child));
  const logs: LogLine[] = [];
  const stderr: string[] = [];
  const waiters = new Set<{ match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }>();
  let buffered = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { level: 'raw', msg: text };
      }
      logs.push(line);
      if (line.msg === 'payment worker ready' && typeof line.startUrl === 'string')
        agent.startOrigin = new URL(line.startUrl).origin;
      for (const w of waiters) if (w.match(line)) (waiters.delete(w), w.resolve(line));
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const agent: AgentProcess = {
    child,
    pid: child.pid!,
    logs,
    stderr,
    startOrigin: null,
    exited,
    waitForLog(match, timeoutMs, what = 'a log line') {
      const seen = logs.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = { match, resolve: (l: LogLine) => (clearTimeout(timer), resolve(l)) };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(
            new Error(`timed out after ${timeoutMs} ms waiting for ${what}; stderr: ${stderr.join('').slice(-2000)}`),
          );
        }, timeoutMs);
        waiters.add(waiter);
        void exited.then(({ code, signal }) => {
          if (!waiters.has(waiter)) return;
          waiters.delete(waiter);
          clearTimeout(timer);
          reject(
            new Error(
              `agent exited (code ${code}, signal ${signal}) while waiting ` +
                `for ${what}; stderr: ${stderr.join('').slice(-2000)}`,
            ),
          );
        });
      });
    },
  };
  return agent;
}

export async function createRig(options: RigOptions = {}): Promise<Rig> {
  // Undone in reverse order if a later step fails, and by close().
  const teardown: Array<() => unknown> = [];
  const undo = async (): Promise<Error[]> => {
    const errors: Error[] = [];
    for (const step of teardown.splice(0).reverse()) {
      try {
        await step();
      } catch (err) {
        errors.push(err as Error);
      }
    }
    return errors;
  };
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-rig-'));
  if (!options.keepDir) liveDirs.add(dir);
  teardown.push(() => {
    if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
  });
  try {
    return await buildRig(dir, options, teardown, undo);
  } catch (err) {
    await undo();
    throw err;
  }
}

async function buildRig(
  dir: string,
  options: RigOptions,
  teardown: Array<() => unknown>,
  undo: () => Promise<Error[]>,
): Promise<Rig> {
  const secretToken = randomBytes(32).toString('hex');
  const tokenFile = join(dir, 'secret-token');
  writeFileSync(tokenFile, `${secretToken}\n`, { mode: 0o600 });
  const integratorName = 'rig-wallet';
  const terminalId = 'RIG-TERMINAL-1';
  const uniQr = 'RIG-UNIQR-1';

  const gateway = await startGatewaySimulator({ host: '127.0.0.1', port: 0, seed: options.gatewaySeed ?? 1 });
  teardown.push(() => gateway.close());
  const pty = await (options.ptyPair ?? createPtyPair)();
  teardown.push(() => pty.close());
  const base: Json = {
    gateway: { baseUrl: gateway.url, timeoutMs: 2000, connectTimeoutMs: 1000 },
    start: {
      listen: '127.0.0.1:0',
      integratorName,
      secretTokenFile: tokenFile,
      rateLimit: { perSecond: 1000, burst: 1000 },
    },
    machine: { terminalId, uniQr },
    device: { hwSerial: 'RIG-HW-1' },
    mdb: {
      port: pty.agentPath,
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
  const siteConfig = layer(base, options.config ?? {});
  const configFile = join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify(siteConfig, null, 2));

  const vmc = new VmcSimulator({ pollIntervalMs: 100, ...options.vmc });
  teardown.push(() => vmc.close());
  const attach = async () => vmc.attach(await openSerialLink({ path: pty.vmcPath, baudRate: 115200 }));
  await attach();
  // The daemon goes first on close (it holds the pty and talks to the gateway).
  teardown.push(async () => {
    if (rig.agent) await rig.stopAgent('SIGKILL');
  });

  const env = { ...process.env, QRVEND_CONFIG: '', ...options.env };
  const rig: Rig = {
    dir,
    configFile,
    overlayFile: (siteConfig as { fleet: { configOverlay: string } }).fleet.configOverlay,
    secretToken,
    integratorName,
    terminalId,
    uniQr,
    gateway,
    pty,
    vmc,
    agent: null,
    async startAgent(timeoutMs = AGENT_START_DEADLINE_MS) {
      const enabled = rig.nextCommand(
        (c) => c.kind === 'enable' && c.enabled,
        timeoutMs,
        'the reader to be enabled (C,1)',
      );
      const agent = spawnAgent(configFile, env);
      rig.agent = agent;
      await agent.waitForLog((l) => l.msg === 'payment worker ready', timeoutMs, 'the payment worker to be ready');
      await enabled;
      return agent;
    },
    async startAgentProcessOnly() {
      rig.agent = spawnAgent(configFile, env);
      return rig.agent;
    },
    async stopAgent(signal = 'SIGTERM') {
      const agent = rig.agent;
      if (agent === null) return { code: null, signal: null };
      if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill(signal);
      const result = await agent.exited;
      rig.agent = null;
      return result;
    },
    async start(opts = {}) {
      const origin = rig.agent?.startOrigin;
      if (!origin) throw new Error('the agent is not running (no Start endpoint)');
      return sendStart({
        url: origin,
        integratorName,
        secretToken: opts.secretToken ?? secretToken,
        ...(opts.uniQr !== undefined ? { uniQr: opts.uniQr } : { terminalId: opts.terminalId ?? terminalId }),
        ...(opts.balance !== undefined ? { balance: opts.balance } : {}),
        ...(opts.transactionId !== undefined ? { transactionId: opts.transactionId } : {}),
        timeoutMs: 5000,
      });
    },
    nextCommand: (match, timeoutMs, what) => nextCommand(vmc, match, timeoutMs, what),
    reattachVmc: attach,
    async close() {
      const errors = await undo();
      if (errors.length > 0) throw new AggregateError(errors, `rig close: ${errors.map((e) => e.message).join('; ')}`);
    },
  };
  return rig;
}
