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
import { fileURLToPath } from 'node:url';
import { startGatewaySimulator } from '../src/sim/gateway/index.js';
import { VmcSimulator } from '../src/sim/vmc/index.js';
import { createPtyPair, type PtyPair } from '../src/sim/pty-pair.js';
import { openSerialLink } from '../src/mdb/transport/index.js';
import { nextCommand } from '../src/sim/wait.js';
import { atProcessEnd } from '../src/sim/process-end.js';
import { LogBook, lineSplitter, type AgentExit, type AgentHandle } from './agent-log.js';
import {
  AGENT_START_DEADLINE_MS,
  Teardown,
  scratchDir,
  sendRigStart,
  writeIdentity,
  writeSiteConfig,
  type AgentRig,
  type RigOptionsBase,
} from './rig-parts.js';

export { until } from '../src/sim/wait.js';
export type { AgentExit, AgentHandle, LogLine } from './agent-log.js';
export { AGENT_START_DEADLINE_MS, type AgentRig, type RigStartOptions } from './rig-parts.js';

const MAIN_JS = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

export interface RigOptions extends RigOptionsBase {
  /** Makes the serial line between daemon and VMC (default: createPtyPair()). */
  ptyPair?: () => Promise<PtyPair>;
  /** Extra environment of the daemon process (e.g. the test clock, src/core/clock.ts). */
  env?: NodeJS.ProcessEnv;
}

/** Daemon processes of rigs not closed yet: killed if this process ends first. */
const liveAgents = new Set<ChildProcess>();
atProcessEnd(() => {
  for (const child of liveAgents) child.kill('SIGKILL');
});

export interface AgentProcess extends AgentHandle {
  readonly child: ChildProcess;
  readonly pid: number;
}

export interface Rig extends AgentRig<AgentProcess> {
  readonly pty: PtyPair;
  /** Spawns `qrvend run` and waits for the payment worker to be ready and the reader enabled. */
  startAgent(timeoutMs?: number): Promise<AgentProcess>;
  /** Spawns `qrvend run` without waiting for anything (for tests of a start that does not go well). */
  startAgentProcessOnly(): Promise<AgentProcess>;
  /** SIGTERM (graceful) or SIGKILL (crash); resolves when the process is gone. */
  stopAgent(signal?: NodeJS.Signals): Promise<AgentExit>;
  /** Re-attaches the VMC simulator to the pty (after pty.replug()). */
  reattachVmc(): Promise<void>;
}

export function spawnAgent(configFile: string, env: NodeJS.ProcessEnv): AgentProcess {
  const child = spawn(process.execPath, [MAIN_JS, 'run', '--config', configFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  liveAgents.add(child);
  child.once('exit', () => liveAgents.delete(child));
  const stderr: string[] = [];
  const exited = new Promise<AgentExit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  const book = new LogBook(exited, stderr);
  child.stdout!.setEncoding('utf8').on(
    'data',
    lineSplitter((text) => book.add(text)),
  );
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  return {
    child,
    pid: child.pid!,
    logs: book.logs,
    stderr,
    get startOrigin() {
      return book.startOrigin;
    },
    exited,
    waitForLog: (match, timeoutMs, what) => book.waitForLog(match, timeoutMs, what),
  };
}

export async function createRig(options: RigOptions = {}): Promise<Rig> {
  // Undone in reverse order if a later step fails, and by close().
  const teardown = new Teardown();
  try {
    return await buildRig(scratchDir(teardown, options.keepDir), options, teardown);
  } catch (err) {
    await teardown.undo();
    throw err;
  }
}

async function buildRig(dir: string, options: RigOptions, teardown: Teardown): Promise<Rig> {
  const id = writeIdentity(dir);
  const gateway = await startGatewaySimulator({ host: '127.0.0.1', port: 0, seed: options.gatewaySeed ?? 1 });
  teardown.push(() => gateway.close());
  const pty = await (options.ptyPair ?? createPtyPair)();
  teardown.push(() => pty.close());
  const { configFile, overlayFile } = writeSiteConfig(dir, id, gateway.url, pty.agentPath, options.config);

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
    overlayFile,
    secretToken: id.secretToken,
    integratorName: id.integratorName,
    terminalId: id.terminalId,
    uniQr: id.uniQr,
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
    start: (opts = {}) => sendRigStart(rig.agent?.startOrigin ?? null, id, opts),
    nextCommand: (match, timeoutMs, what) => nextCommand(vmc, match, timeoutMs, what),
    reattachVmc: attach,
    close: () => teardown.close(),
  };
  return rig;
}
