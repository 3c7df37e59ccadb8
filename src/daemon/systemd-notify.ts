/**
 * sd_notify for the daemon: READY, WATCHDOG, EXTEND_TIMEOUT_USEC, STOPPING and STATUS, sent from
 * the main thread (the machine loop's) without waiting for anything.
 *
 * Node cannot send on a unix datagram socket, and starting a process per message stalls the
 * calling thread for the fork of a large process. So one helper, `qrvend-notify`
 * (native/notify-helper.c), is started when the notifier is made, before the machine loop runs,
 * and lives as long as the daemon: each message is one NUL-ended record written to its stdin.
 * Writing to a pipe never blocks the thread (libuv writes what the pipe takes, queues the rest and
 * returns), so neither a slow systemd nor a busy payment worker can delay the machine loop or a
 * notification. The helper sends each record as one datagram to $NOTIFY_SOCKET, as sd_notify does,
 * and makes sure systemd has read READY and STOPPING (BARRIER=1) before it could exit; the unit
 * keeps NotifyAccess=all because the sender is the helper, a child of the main PID.
 *
 * Outside systemd (NOTIFY_SOCKET unset) everything is a no-op. A helper that cannot start or dies
 * is logged once at error: without it systemd hears nothing, so the start or the watchdog times
 * out and systemd restarts the agent, which is the right outcome for a broken installation.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../core/log.js';
import { RepeatedLog } from '../core/log-limiter.js';

export interface Notifier {
  /** The agent can take a payment. Before it, `watchdog()` also extends the start timeout. */
  ready(status?: string): void;
  /** The main loop is alive; call every `watchdogIntervalMs` from the main thread's own timer. */
  watchdog(): void;
  /** Graceful shutdown has begun (SIGTERM received). */
  stopping(): void;
  /** Free text shown by `systemctl status qrvend` (e.g. "reader enabled, 3 queued"). */
  status(text: string): void;
  /** WATCHDOG_USEC/2 in ms when systemd expects pings from this process, else null. */
  readonly watchdogIntervalMs: number | null;
  /** Whether messages are sent at all (NOTIFY_SOCKET set and the helper running). */
  readonly enabled: boolean;
}

export interface NotifierOptions {
  /** Environment to read NOTIFY_SOCKET / WATCHDOG_USEC / WATCHDOG_PID from; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The helper to run; default the qrvend-notify built beside this module (dist/src/native). */
  helper?: string;
  /** Our PID (MAINPID=, and WATCHDOG_PID must match it); default process.pid. */
  pid?: number;
}

export const NOTIFY_HELPER = fileURLToPath(new URL('../native/qrvend-notify', import.meta.url));

/** Beyond this much unwritten, a stuck helper gets no more pings or STATUS (READY/STOPPING still queue). */
const MAX_QUEUED_BYTES = 16 * 1024;

/** The watchdog interval systemd asks for, or null when no watchdog applies to this process. */
export function watchdogIntervalFrom(env: NodeJS.ProcessEnv, pid: number): number | null {
  if (!env.NOTIFY_SOCKET) return null;
  const usec = Number(env.WATCHDOG_USEC);
  if (!Number.isFinite(usec) || usec <= 0) return null;
  // WATCHDOG_PID, when set, names the process the watchdog is meant for (not our children).
  if (env.WATCHDOG_PID !== undefined && env.WATCHDOG_PID !== '' && Number(env.WATCHDOG_PID) !== pid) return null;
  return Math.max(1, Math.floor(usec / 2000));
}

/** STATUS= is one line in systemd's view; keep it short, single-line and free of the record separator. */
function oneLine(text: string): string {
  return text.replace(/[\r\n\0]+/g, ' ').slice(0, 200);
}

export function createNotifier(log: Logger, options: NotifierOptions = {}): Notifier {
  const env = options.env ?? process.env;
  const helper = options.helper ?? NOTIFY_HELPER;
  const pid = options.pid ?? process.pid;
  const watchdogIntervalMs = watchdogIntervalFrom(env, pid);
  let isReady = false;
  let child: ChildProcess | null = null;

  const gone = (why: string): void => {
    if (child === null) return;
    child = null;
    log.error(
      { helper, problem: why },
      'systemd notifications stopped: the qrvend-notify helper is gone, so systemd will time the agent out and ' +
        'restart it; if this repeats, reinstall the qrvend package',
    );
  };

  if (env.NOTIFY_SOCKET) child = startHelper(log, helper, env, gone);
  else log.debug('NOTIFY_SOCKET is not set: not running under systemd, notifications are off');

  const send = (assignments: Record<string, string>, essential: boolean): void => {
    const stdin = child?.stdin;
    if (!stdin || stdin.destroyed) return;
    if (!essential && stdin.writableLength > MAX_QUEUED_BYTES) return;
    const text = Object.entries(assignments)
      .map(([key, value]) => `${key}=${value}`)
      .join('\n');
    stdin.write(`${text}\0`);
  };

  return {
    watchdogIntervalMs,
    get enabled() {
      return child !== null;
    },
    ready(status?: string) {
      isReady = true;
      // MAINPID: systemd tracks the agent itself as the main process even when a wrapper started it.
      send({ READY: '1', MAINPID: String(pid), ...(status === undefined ? {} : { STATUS: oneLine(status) }) }, true);
    },
    watchdog() {
      if (watchdogIntervalMs === null) return;
      // While starting, the same proof of life keeps the start timeout from firing: a main loop
      // that stops pinging is then caught by TimeoutStartSec just as the watchdog would.
      const message: Record<string, string> = { WATCHDOG: '1' };
      if (!isReady) message.EXTEND_TIMEOUT_USEC = String(watchdogIntervalMs * 4 * 1000);
      send(message, false);
    },
    stopping() {
      send({ STOPPING: '1' }, true);
    },
    status(text: string) {
      send({ STATUS: oneLine(text) }, false);
    },
  };
}

/**
 * Starts the qrvend-notify helper, or logs why it cannot be and returns null. `gone` hears of its
 * end (an error or its exit); what it writes on stderr is logged at most once a minute.
 */
function startHelper(
  log: Logger,
  helper: string,
  env: NodeJS.ProcessEnv,
  gone: (why: string) => void,
): ChildProcess | null {
  const complaints = new RepeatedLog({
    intervalMs: 60_000,
    write: (fields, repeated) =>
      log.warn({ ...fields, ...(repeated > 0 ? { repeated } : {}) }, 'systemd notification trouble'),
  });
  let child: ChildProcess | null = null;
  try {
    // Measured here because this is the one moment the main thread waits for a fork.
    const startedAt = performance.now();
    child = spawn(helper, [], { env, stdio: ['pipe', 'ignore', 'pipe'] });
    log.debug({ spawnMs: Math.round((performance.now() - startedAt) * 100) / 100 }, 'qrvend-notify helper started');
  } catch (err) {
    log.error(
      { helper, problem: (err as Error).message },
      'the qrvend-notify helper cannot be started: systemd will time the agent out; reinstall the qrvend package ' +
        '(or run `npm run build` in a checkout)',
    );
  }
  const c = child;
  if (c !== null) {
    c.on('error', (err: Error) => gone(err.message));
    c.on('exit', (code, signal) => gone(`exited with ${code ?? signal}`));
    c.stdin?.on('error', () => {}); // EPIPE after the helper died: 'exit' says so
    c.stderr?.setEncoding('utf8');
    c.stderr?.on('data', (text: string) => {
      for (const line of text.split('\n'))
        if (line.trim() !== '') complaints.add({ helperSays: line.trim().slice(0, 200) });
    });
    // Never keep the daemon alive for the helper: at our exit its stdin closes and it ends.
    c.unref();
    for (const stream of [c.stdin, c.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }
  return c;
}
