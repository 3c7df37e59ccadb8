/**
 * sd_notify for the daemon: READY, WATCHDOG, STOPPING and STATUS messages to systemd.
 *
 * Node cannot send on a unix datagram socket, and the `sd-notify` package needs libsystemd
 * headers to build, so messages go through the `systemd-notify` command (the unit sets
 * NotifyAccess=all so systemd accepts them from that child). Since systemd 246 the command waits
 * until systemd has read the message (a barrier), which closes the race where the child exits
 * before systemd can attribute it to the unit; `--no-block` would reopen it, so it is never used.
 * READY also carries `--pid=<our pid>` (MAINPID=) so systemd tracks the agent itself as the main
 * process even when a wrapper started it.
 *
 * This runs on the main thread, which must never block: the child is spawned asynchronously with
 * its output ignored, at most one is in flight, and messages that arrive meanwhile are merged into
 * the next call (a watchdog ping while one is pending is simply coalesced). Outside systemd
 * (NOTIFY_SOCKET unset) or without the command, everything is a no-op after one log line.
 */
import { spawn } from 'node:child_process';
import type { Logger } from '../core/log.js';

export interface Notifier {
  /** The service is up (send at reader enabled). Before it, `watchdog()` also extends the start timeout. */
  ready(status?: string): void;
  /** The main loop is alive; call every `watchdogIntervalMs` from the main thread's own timer. */
  watchdog(): void;
  /** Graceful shutdown has begun (SIGTERM received). */
  stopping(): void;
  /** Free text shown by `systemctl status qrvend` (e.g. "reader enabled, 3 queued"). */
  status(text: string): void;
  /** WATCHDOG_USEC/2 in ms when systemd expects pings from this process, else null. */
  readonly watchdogIntervalMs: number | null;
  /** Whether messages are sent at all (NOTIFY_SOCKET set and the command not found missing). */
  readonly enabled: boolean;
}

export interface NotifierOptions {
  /** Environment to read NOTIFY_SOCKET / WATCHDOG_USEC / WATCHDOG_PID / PATH from; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The command to run; default `systemd-notify` looked up on PATH. */
  command?: string;
  /** Our PID (WATCHDOG_PID must match it); default process.pid. */
  pid?: number;
  /** A child still running after this long is killed, so one stuck call cannot stop later ones. */
  childTimeoutMs?: number;
}

/** The watchdog interval systemd asks for, or null when no watchdog applies to this process. */
export function watchdogIntervalFrom(env: NodeJS.ProcessEnv, pid: number): number | null {
  if (!env.NOTIFY_SOCKET) return null;
  const usec = Number(env.WATCHDOG_USEC);
  if (!Number.isFinite(usec) || usec <= 0) return null;
  // WATCHDOG_PID, when set, names the process the watchdog is meant for (not our children).
  if (env.WATCHDOG_PID !== undefined && env.WATCHDOG_PID !== '' && Number(env.WATCHDOG_PID) !== pid) return null;
  return Math.max(1, Math.floor(usec / 2000));
}

/** STATUS= is one line in systemd's view; keep it short and single-line. */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, 200);
}

export function createNotifier(log: Logger, options: NotifierOptions = {}): Notifier {
  const env = options.env ?? process.env;
  const command = options.command ?? 'systemd-notify';
  const pid = options.pid ?? process.pid;
  const childTimeoutMs = options.childTimeoutMs ?? 5_000;
  const watchdogIntervalMs = watchdogIntervalFrom(env, pid);

  let enabled = Boolean(env.NOTIFY_SOCKET);
  if (!enabled) log.debug('NOTIFY_SOCKET is not set: not running under systemd, notifications are off');

  let isReady = false;
  // Calls of systemd-notify still running: normally at most one (later messages merge into the next).
  let inFlight = 0;
  // Assignments waiting for the next call; a later value for the same key replaces the earlier.
  const pending = new Map<string, string>();
  let pendingMainPid = false;
  let failuresLogged = 0;
  // Set when the pending READY/STOPPING are a second attempt after a failed call.
  let pendingIsRetry = false;

  // `urgent` starts a call even while one is in flight: STOPPING=1 must be on its way before the
  // process exits, and the daemon exits without waiting for a slow watchdog ping to return.
  const flush = (urgent = false): void => {
    if (!enabled || (inFlight > 0 && !urgent) || pending.size === 0) return;
    const sent = new Map(pending);
    const sentMainPid = pendingMainPid;
    const isRetry = pendingIsRetry;
    const args: string[] = [];
    if (sentMainPid) args.push(`--pid=${pid}`);
    for (const [key, value] of sent) args.push(`${key}=${value}`);
    pending.clear();
    pendingMainPid = false;
    pendingIsRetry = false;
    inFlight++;

    let child;
    try {
      child = spawn(command, args, { env, stdio: 'ignore', timeout: childTimeoutMs, killSignal: 'SIGKILL' });
    } catch (err) {
      inFlight--;
      enabled = false;
      log.warn({ err: (err as Error).message }, 'systemd-notify could not be started: systemd notifications are off');
      return;
    }
    // Never keep the daemon alive for a notification (e.g. STOPPING=1 during exit).
    child.unref();
    // 'error' (spawn failure) and 'close' may both fire for one child; only the first settles it.
    let settled = false;
    const settle = (problem: string | null, missing = false): void => {
      if (settled) return;
      settled = true;
      inFlight--;
      if (missing) {
        enabled = false;
        log.warn(
          `${command} is not installed: systemd cannot be told the agent is ready or alive, so the unit will ` +
            'time out and restart it; install the systemd package',
        );
        return;
      }
      if (problem !== null) {
        if (failuresLogged++ === 0) log.warn({ problem }, 'systemd-notify failed; READY/STOPPING are retried once');
        // A lost READY would make systemd time the start out: give the state changes one more try.
        if (!isRetry) {
          for (const key of ['READY', 'STOPPING']) {
            const value = sent.get(key);
            if (value !== undefined && !pending.has(key)) {
              pending.set(key, value);
              pendingIsRetry = true;
            }
          }
          if (sentMainPid) pendingMainPid = true;
        }
      }
      flush();
    };
    child.once('error', (err: NodeJS.ErrnoException) => settle(err.message, err.code === 'ENOENT'));
    child.once('close', (code, signal) => settle(code === 0 ? null : `exit code ${code ?? signal}`));
  };

  const send = (assignments: Record<string, string>, withMainPid = false, urgent = false): void => {
    if (!enabled) return;
    for (const [key, value] of Object.entries(assignments)) pending.set(key, value);
    if (withMainPid) pendingMainPid = true;
    flush(urgent);
  };

  return {
    get watchdogIntervalMs() {
      return watchdogIntervalMs;
    },
    get enabled() {
      return enabled;
    },
    ready(status?: string) {
      isReady = true;
      pending.delete('EXTEND_TIMEOUT_USEC');
      send(status === undefined ? { READY: '1' } : { READY: '1', STATUS: oneLine(status) }, true);
    },
    watchdog() {
      if (watchdogIntervalMs === null) return;
      // While starting, the same proof of life keeps the start timeout from firing: a main loop
      // that stops pinging is then caught by TimeoutStartSec just as the watchdog would.
      const message: Record<string, string> = { WATCHDOG: '1' };
      if (!isReady) message.EXTEND_TIMEOUT_USEC = String(watchdogIntervalMs * 4 * 1000);
      send(message);
    },
    stopping() {
      // spawn() returns once the child runs, so the message survives the daemon's exit.
      send({ STOPPING: '1' }, false, true);
    },
    status(text: string) {
      send({ STATUS: oneLine(text) });
    },
  };
}
