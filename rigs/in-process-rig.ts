/**
 * The in-process rig: the real daemon wiring (src/daemon/daemon.ts: the machine loop on this
 * thread, the payment, display and fleet workers as threads) in the test's own process, as
 * `qrvend demo` runs it: the VMC simulator on the in-memory wire (mdb.port "sim"), the gateway
 * simulator on loopback HTTP, the wallet simulator for Start, and the same site configuration,
 * identity and SecretToken as the process rig (rigs/rig-parts.ts). A daemon start costs no
 * process and no pty relay.
 *
 * What only a process can show stays on the process rig (rigs/rig.ts): signals and exit codes, a
 * SIGKILL at a chosen moment, the serial line as a tty, the environment of `qrvend run`. Here the
 * daemon stops as `qrvend run` stops it on SIGTERM (Daemon.stop), never by a crash.
 *
 * Every thread writes its log lines to one file in the rig's directory (createLogger's `file`: the
 * workers log where the main thread's logger does), read back as they come, so a test waits for a
 * line of any thread as it does on the process rig's stdout.
 */
import { closeSync, openSync, readSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { StringDecoder } from 'node:string_decoder';
import { loadConfig } from '../src/config/load.js';
import { createLogger } from '../src/core/log.js';
import { startDaemon, type Daemon } from '../src/daemon/daemon.js';
import { assertStartable } from '../src/doctor/start-checks.js';
import { startGatewaySimulator } from '../src/sim/gateway/index.js';
import { VmcSimulator } from '../src/sim/vmc/index.js';
import { nextCommand, until } from '../src/sim/wait.js';
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

/** A bound on the wait for the stop's last log line (it is written a moment after the stop ends). */
const LAST_LINE_WAIT_MS = 10_000;

export interface InProcessAgent extends AgentHandle {
  readonly daemon: Daemon;
}

export interface InProcessRig extends AgentRig<InProcessAgent> {
  /**
   * Stops the daemon as `qrvend run` does on SIGTERM or SIGINT (Daemon.stop); resolves once it
   * stopped and its log was read to the end. It cannot crash: a SIGKILL needs the process rig.
   */
  stopAgent(signal?: 'SIGTERM' | 'SIGINT'): Promise<AgentExit>;
}

/** Appends to `onText` what is appended to a file, as it is appended (inotify), until close(). */
class FileTail {
  private readonly fd: number;
  private readonly decoder = new StringDecoder('utf8');
  private readonly buffer = Buffer.alloc(64 * 1024);
  private readonly watcher: FSWatcher;
  private closed = false;

  constructor(
    path: string,
    private readonly onText: (text: string) => void,
  ) {
    this.fd = openSync(path, 'r');
    this.watcher = watch(path, () => this.read());
  }

  read(): void {
    if (this.closed) return;
    for (;;) {
      const n = readSync(this.fd, this.buffer, 0, this.buffer.length, null);
      if (n === 0) return;
      this.onText(this.decoder.write(this.buffer.subarray(0, n)));
    }
  }

  /** Reads what is left, then stops. */
  close(): void {
    this.read();
    this.closed = true;
    this.watcher.close();
    closeSync(this.fd);
  }
}

/** The daemon of `qrvend run`, started in this process on the rig's site file, the VMC on its wire. */
function startInProcessAgent(configFile: string, logFile: string, vmc: VmcSimulator): InProcessAgent {
  const { config, file } = loadConfig({ file: configFile, env: {} });
  assertStartable(config);
  writeFileSync(logFile, '');
  const log = createLogger({ level: config.log.level, name: 'qrvend', file: logFile });
  const stderr: string[] = [];
  let ended!: (exit: AgentExit) => void;
  const exited = new Promise<AgentExit>((resolve) => (ended = resolve));
  const book = new LogBook(exited, stderr);
  const tail = new FileTail(
    logFile,
    lineSplitter((text) => book.add(text)),
  );
  let daemon: Daemon;
  try {
    daemon = startDaemon({
      config,
      log,
      onSimWire: (wire) => vmc.attach(wire.vmcEnd),
      statsIntervalMs: config.log.statsIntervalMs,
      configFile: file ?? null,
    });
  } catch (err) {
    tail.close();
    throw err;
  }
  void daemon.done.then(async (code) => {
    // The workers write their lines before they stop; the main thread's logger writes
    // asynchronously, so the stop's last line ("stopped", Daemon.stop) may still be on its way.
    const last = () => book.logs.some((l) => l.msg === 'stopped' && l.thread === threadId);
    const lastRead = () => (tail.read(), last());
    await until(lastRead, LAST_LINE_WAIT_MS, "the daemon's last log line", 5).catch(() => {});
    tail.close();
    ended({ code, signal: null });
  });
  return {
    daemon,
    logs: book.logs,
    stderr,
    get startOrigin() {
      return book.startOrigin;
    },
    exited,
    waitForLog: (match, timeoutMs, what) => book.waitForLog(match, timeoutMs, what),
  };
}

export async function createInProcessRig(options: RigOptionsBase = {}): Promise<InProcessRig> {
  // Undone in reverse order if a later step fails, and by close().
  const teardown = new Teardown();
  try {
    return await buildRig(scratchDir(teardown, options.keepDir), options, teardown);
  } catch (err) {
    await teardown.undo();
    throw err;
  }
}

async function buildRig(dir: string, options: RigOptionsBase, teardown: Teardown): Promise<InProcessRig> {
  const id = writeIdentity(dir);
  const gateway = await startGatewaySimulator({ host: '127.0.0.1', port: 0, seed: options.gatewaySeed ?? 1 });
  teardown.push(() => gateway.close());
  const { configFile, overlayFile } = writeSiteConfig(dir, id, gateway.url, 'sim', options.config);
  const vmc = new VmcSimulator({ pollIntervalMs: 100, ...options.vmc });
  teardown.push(() => vmc.close());
  // The daemon goes first on close (it holds the wire and talks to the gateway).
  teardown.push(async () => {
    if (rig.agent) await rig.stopAgent();
  });
  let starts = 0;
  const rig: InProcessRig = {
    dir,
    configFile,
    overlayFile,
    secretToken: id.secretToken,
    integratorName: id.integratorName,
    terminalId: id.terminalId,
    uniQr: id.uniQr,
    gateway,
    vmc,
    agent: null,
    async startAgent(timeoutMs = AGENT_START_DEADLINE_MS) {
      const enabled = rig.nextCommand(
        (c) => c.kind === 'enable' && c.enabled,
        timeoutMs,
        'the reader to be enabled (C,1)',
      );
      enabled.catch(() => {}); // awaited below, unless the start throws first
      starts += 1;
      const agent = startInProcessAgent(configFile, join(dir, `agent-${starts}.log`), vmc);
      rig.agent = agent;
      await agent.waitForLog((l) => l.msg === 'payment worker ready', timeoutMs, 'the payment worker to be ready');
      await enabled;
      return agent;
    },
    async stopAgent(signal = 'SIGTERM') {
      const agent = rig.agent;
      if (agent === null) return { code: null, signal: null };
      void agent.daemon.stop(`received ${signal}`);
      const result = await agent.exited;
      rig.agent = null;
      return result;
    },
    start: (opts = {}) => sendRigStart(rig.agent?.startOrigin ?? null, id, opts),
    nextCommand: (match, timeoutMs, what) => nextCommand(vmc, match, timeoutMs, what),
    close: () => teardown.close(),
  };
  return rig;
}
