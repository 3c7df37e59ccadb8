/**
 * Logging: one JSON object per line on stdout (journald keeps them), through pino.
 *
 * The destination writes straight to file descriptor 1 from whichever thread logs, so a worker's
 * log lines never travel through the main thread's event loop. Secrets are redacted by path
 * wherever they could appear; still, never pass a secret to a logger on purpose.
 */
import { pino, type Logger, type LevelWithSilent } from 'pino';
import { threadId } from 'node:worker_threads';

export type { Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Paths redacted in every log line: the Start SecretToken in any request body we might log. */
export const REDACT_PATHS = [
  'SecretToken',
  '*.SecretToken',
  '*.*.SecretToken',
  'secretToken',
  '*.secretToken',
  'token',
  '*.token',
  'headers.authorization',
  '*.headers.authorization',
];

export interface LogOptions {
  level?: LogLevel;
  /** Component name, e.g. "mdb", "gateway", "ledger". */
  name?: string;
  /** Where to write; defaults to stdout (fd 1). Tests may pass a stream to capture lines. */
  destination?: NodeJS.WritableStream;
  /**
   * A file to append to instead of stdout. The daemon's worker threads write where the main
   * thread's logger writes (logFileOf): the in-process test rig reads every thread's lines back
   * from one file (docs/testing.md). `qrvend run` logs to stdout.
   */
  file?: string | null;
  /**
   * Write each line before returning. Worker threads use it: a worker is terminated once it says
   * it is done, and an asynchronous write still queued then would be lost.
   */
  sync?: boolean;
}

/** The file each logger made with `file` writes to. */
const logFiles = new WeakMap<Logger, string>();

export function createLogger(options: LogOptions = {}): Logger {
  const file = options.file ?? null;
  const destination = options.destination ?? pino.destination({ dest: file ?? 1, sync: options.sync ?? false });
  const logger = pino(
    {
      level: (options.level ?? 'info') as LevelWithSilent,
      name: options.name ?? 'qrvend',
      base: { pid: process.pid, thread: threadId },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  if (file !== null && options.destination === undefined) logFiles.set(logger, file);
  return logger;
}

/** The file `log` appends to, or null when it writes to stdout (or a stream): where a worker thread's logger writes. */
export function logFileOf(log: Logger): string | null {
  return logFiles.get(log) ?? null;
}

/** A logger that drops everything: for unit tests and quiet CLI paths. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
