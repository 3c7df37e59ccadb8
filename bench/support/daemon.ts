/**
 * The real daemon for the end-to-end figures: `node dist/src/cli/main.js run --config <file>` as
 * a child process, its serial port one end of a pty pair, the VMC simulator on the other
 * end, the gateway simulator on loopback, and a ledger file on disk.
 *
 * Its stdout (pino NDJSON) is read line by line; lines carrying `eventLoopDelay` (the periodic
 * `stats` line of `qrvend run`) are kept for the event-loop figure, the rest is dropped.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { QRVEND_MAIN, REPO_ROOT } from './machine.js';

/** False while `qrvend run` is still the skeleton's placeholder. */
export function daemonBuilt(): boolean {
  const out = spawnSync(process.execPath, [QRVEND_MAIN, 'run', '--help'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 20_000,
  });
  const text = `${out.stdout ?? ''}${out.stderr ?? ''}`;
  return out.status === 0 && !/not built yet/i.test(text);
}

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released for the daemon to take). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

/** How often the daemon logs its `stats` line during the benchmarks. */
export const STATS_INTERVAL_MS = 1000;

export interface DaemonConfigInput {
  dir: string;
  gatewayUrl: string;
  serialPath: string;
  storePath: string;
  preauthAmount: number;
  startPort: number;
  /** Changes to the configuration before it is written (sections are plain objects). */
  patch?: (config: Record<string, Record<string, unknown>>) => void;
}

export interface DaemonFiles {
  configPath: string;
  /** For the wallet simulator; never printed. */
  secretToken: string;
  startUrl: string;
  integratorName: string;
  uniQr: string;
}

/** Writes the SecretToken file and a site configuration layered over config/default.json. */
export function writeDaemonConfig(c: DaemonConfigInput): DaemonFiles {
  const secretToken = randomBytes(32).toString('hex');
  const tokenPath = join(c.dir, 'secret-token');
  writeFileSync(tokenPath, `${secretToken}\n`, { mode: 0o600 });
  const integratorName = 'qrvend-bench';
  const uniQr = 'QRVEND-BENCH-0001';
  const config = {
    gateway: { baseUrl: c.gatewayUrl },
    start: {
      listen: `127.0.0.1:${c.startPort}`,
      integratorName,
      secretTokenFile: tokenPath,
      rateLimit: { perSecond: 1000, burst: 1000 },
    },
    machine: { terminalId: 'BENCH-TERMINAL-1', uniQr },
    device: { hwSerial: 'BENCH0000000001' },
    mdb: { port: c.serialPath, alwaysIdle: false, sessionIdleTimeoutMs: 600_000, vendResultTimeoutMs: 60_000 },
    store: { path: c.storePath },
    display: { framebuffer: null, png: null, terminal: false },
    staticQr: { preauthAmount: c.preauthAmount },
    gpio: { mode: 'off' },
    // A stats line (event-loop delay histogram, reset each time) every second.
    // The event-loop figure samples every 1 ms (production: 100 ms, log.loopDelayResolutionMs).
    log: { level: 'info', statsIntervalMs: STATS_INTERVAL_MS, loopDelayResolutionMs: 1 },
  };
  c.patch?.(config as unknown as Record<string, Record<string, unknown>>);
  const configPath = join(c.dir, 'qrvend.json');
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  return { configPath, secretToken, startUrl: `http://127.0.0.1:${c.startPort}`, integratorName, uniQr };
}

/**
 * One `stats` line's event-loop delay (ms, over the interval since the previous line), with when it
 * was read. The daemon samples with monitorEventLoopDelay({resolution: 1}), whose histogram records
 * the time between its 1 ms timer ticks (an idle loop reads about 1.0-1.1 ms); the stats line gives
 * the excess over the tick, the lateness proper (docs/decisions/benchmarks.md; before it, the line gave the interval).
 */
export interface LoopDelayReport {
  atMs: number;
  p50: number;
  p99: number;
  max: number;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** Reads {p50, p99, max} from the `stats` line's stats.eventLoopDelayMs member. */
export function loopDelayOf(entry: Record<string, unknown>): Omit<LoopDelayReport, 'atMs'> | null {
  const stats = entry.stats as Record<string, unknown> | undefined;
  const raw = stats?.eventLoopDelayMs ?? entry.eventLoopDelayMs;
  if (typeof raw !== 'object' || raw === null) return null;
  const o = raw as Record<string, unknown>;
  const p50 = num(o.p50);
  const p99 = num(o.p99);
  const max = num(o.max);
  return p50 === null || p99 === null || max === null ? null : { p50, p99, max };
}

/** The installed `qrvend` command: it gives `qrvend run` its node flags and environment. */
const LAUNCHER = join(REPO_ROOT, 'packaging', 'qrvend-wrapper.sh');
/** See bench/support/node-with-args.sh (a source file: it is not compiled into dist/). */
const NODE_WITH_ARGS = join(REPO_ROOT, 'bench', 'support', 'node-with-args.sh');

export class DaemonProcess {
  readonly loopDelays: LoopDelayReport[] = [];
  /** `stats.memory` of the latest `stats` line: each thread's V8 heap, as the daemon reports it. */
  lastMemory: Record<string, unknown> | null = null;
  /** The last lines of stderr and of error-level stdout, for the reason of a failure. */
  readonly problems: string[] = [];
  readonly spawnedAt: number;
  /** Bytes the daemon wrote to stdout (its log lines: what journald would store). */
  stdoutBytes = 0;
  /** Log messages watched for (watch()): how many lines carried each so far. */
  private readonly watched = new Map<string, number>();
  private readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    this.spawnedAt = performance.now();
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    const out = createInterface({ input: child.stdout! });
    child.stdout!.on('data', (chunk: Buffer) => (this.stdoutBytes += chunk.length));
    out.on('line', (line) => this.onLine(line));
    const err = createInterface({ input: child.stderr! });
    err.on('line', (line) => this.remember(line));
  }

  /**
   * Started the way systemd starts the service: through the installed launcher
   * (packaging/qrvend-wrapper.sh, which `exec`s node, so the PID is the daemon's) with its node
   * flags (heap caps) and environment (MALLOC_ARENA_MAX). Extra Node options come from
   * QRVEND_BENCH_DAEMON_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile a miss.
   * `extraEnv` is added to its environment (the fail-io shim); `cgroupProcs` is a cgroup's
   * cgroup.procs file the launcher's shell moves itself into before it execs node, so the daemon
   * runs confined from its first instruction (the CPU-budget run).
   */
  static spawn(configPath: string, o: { extraEnv?: NodeJS.ProcessEnv; cgroupProcs?: string } = {}): DaemonProcess {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...o.extraEnv,
      QRVEND_CONFIG: '',
      QRVEND_HOME: REPO_ROOT,
      QRVEND_NODE: process.execPath,
    };
    if (process.env.QRVEND_BENCH_DAEMON_NODE_ARGS) {
      // As arguments through a tiny exec script, not NODE_OPTIONS (which refuses --cpu-prof).
      env.QRVEND_BENCH_REAL_NODE = process.execPath;
      env.QRVEND_NODE = NODE_WITH_ARGS;
    }
    const args = [LAUNCHER, 'run', '--config', configPath];
    // Paths travel as positional parameters, never inside the script text.
    const argv =
      o.cgroupProcs === undefined
        ? args
        : ['-c', 'echo $$ > "$1" && shift && exec sh "$@"', 'sh', o.cgroupProcs, ...args];
    const child = spawn('sh', argv, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
    return new DaemonProcess(child);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** VmRSS of the daemon (every thread shares the one address space), in MB. */
  rssMb(): number {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    if (kb === undefined) throw new Error(`no VmRSS in /proc/${this.pid}/status`);
    return Number(kb) / 1024;
  }

  /** RssAnon (heaps, malloc; not the mapped binary and libraries) of the daemon, in MB. */
  rssAnonMb(): number {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const kb = /^RssAnon:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? Number.NaN : Number(kb) / 1024;
  }

  /** Why it failed, for a figure's reason (the last problems it printed). */
  describeProblems(): string {
    return this.problems.slice(-3).join(' | ') || `exit code ${this.child.exitCode ?? 'none'}`;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /**
   * Counts the log lines whose message is `msg` from now on (e.g. "fleet link connected");
   * `seen()` says how many so far. Cheap: one substring test per line.
   */
  watch(msg: string): { seen(): number } {
    if (!this.watched.has(msg)) this.watched.set(msg, 0);
    return { seen: () => this.watched.get(msg) ?? 0 };
  }

  private onLine(line: string): void {
    for (const [msg, n] of this.watched)
      if (line.includes(`"msg":${JSON.stringify(msg)}`)) this.watched.set(msg, n + 1);
    if (line.includes('eventLoopDelay')) {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        const memory = (entry.stats as Record<string, unknown> | undefined)?.memory;
        if (typeof memory === 'object' && memory !== null) this.lastMemory = memory as Record<string, unknown>;
        const delay = loopDelayOf(entry);
        if (delay !== null) this.loopDelays.push({ atMs: performance.now(), ...delay });
      } catch {
        // not JSON: ignore
      }
    } else if (line.includes('"level":50') || line.includes('"level":60')) {
      this.remember(line);
    } else if (!line.startsWith('{')) {
      // Not a log line: output of Node options given for profiling (--trace-gc...); pass it on.
      process.stderr.write(`[daemon ${this.pid}] ${line}\n`);
    }
  }

  private remember(line: string): void {
    this.problems.push(line.length > 400 ? `${line.slice(0, 400)}...` : line);
    if (this.problems.length > 20) this.problems.shift();
  }
}
