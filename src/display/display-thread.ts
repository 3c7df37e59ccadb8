/**
 * The owner's side of the display worker. `show()` posts a screen and returns at once (the worker
 * draws only the newest pending one); `port` is a second way in, meant to be transferred to the
 * payment worker so it can post ToDisplay messages without a hop through the main thread.
 *
 * A display that is missing or breaks is logged once per output and never stops payments; if the
 * worker itself dies, that is logged and show() does nothing from then on.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { QrvendConfig } from '../config/schema.js';
import { ErrorCodes } from '../core/errors.js';
import { LOG_LEVELS, logFileOf, type Logger, type LogLevel } from '../core/log.js';
import type { FromDisplay, Screen, ThreadMemory, ToDisplay } from '../ipc/messages.js';
import { idleScreen } from './layout.js';
import type { ProductCatalog } from './context.js';
import type { DisplayWorkerData } from './worker.js';

export interface StartDisplayOptions {
  display: QrvendConfig['display'];
  /** Product names for the dynamic QR and vending screens. */
  catalog?: ProductCatalog;
  /** When given, the idle screen (machine.uniQr, "Scan to pay") is shown at once. */
  machine?: Pick<QrvendConfig['machine'], 'uniQr'>;
  log: Logger;
  /** Root of sysfs for the framebuffer geometry (tests point it at a fixture). */
  sysfsRoot?: string;
  /** Draw the terminal QR black on white with ANSI colours (default: when stdout is a TTY). */
  ansi?: boolean;
  /** Every message from the worker (rendered, unavailable), after it has been logged. */
  onEvent?: (event: FromDisplay) => void;
}

export interface DisplayHandle {
  show(screen: Screen): void;
  /** Ask the worker to finish and wait for it (terminated after 3 s). */
  close(): Promise<void>;
  /** Posting `ToDisplay` here reaches the worker too; transfer it to another worker. */
  port: MessagePort;
  /**
   * The worker's heap as it last reported it (null before its first answer), and asks for a
   * fresh report: the stats line calls this once per line, so it shows the previous line's answer.
   */
  memory(): ThreadMemory | null;
}

const CLOSE_TIMEOUT_MS = 3000;

/**
 * The worker's V8 heap caps (docs/decisions/targets.md: <= 90 MB resident, all threads; see
 * src/daemon/heap-limits.ts for why caps). It holds a QR matrix and screen state; the 800x480
 * frame is a Buffer outside the V8 heap. Young generation 3 MB = 1 MB semi-spaces.
 */
const DISPLAY_WORKER_LIMITS = { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 3 };

export function startDisplay(options: StartDisplayOptions): DisplayHandle {
  const { log } = options;
  const channel = new MessageChannel();
  const level = (LOG_LEVELS as readonly string[]).includes(log.level) ? (log.level as LogLevel) : 'info';
  const data: DisplayWorkerData = {
    display: options.display,
    catalog: options.catalog ?? {},
    sysfsRoot: options.sysfsRoot ?? '/sys',
    logLevel: level,
    logFile: logFileOf(log),
    ansi: options.ansi ?? process.stdout.isTTY === true,
    port: channel.port1,
  };
  const worker = new Worker(new URL('./worker.js', import.meta.url), {
    workerData: data,
    transferList: [channel.port1],
    name: 'display',
    resourceLimits: DISPLAY_WORKER_LIMITS,
  });
  let alive = true;
  let closing = false;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));

  let lastMemory: ThreadMemory | null = null;
  worker.on('message', (event: FromDisplay) => {
    if (event.type === 'memory') {
      lastMemory = event.memory;
      return;
    }
    if (event.type === 'unavailable') {
      log.warn(
        { code: ErrorCodes.DISPLAY_UNAVAILABLE, output: event.output, reason: event.reason },
        `display output ${event.output} unavailable; payments continue without it`,
      );
    }
    options.onEvent?.(event);
  });
  worker.on('error', (err) => {
    alive = false;
    log.error(
      { err, code: ErrorCodes.DISPLAY_UNAVAILABLE },
      'display worker failed; payments continue without a display',
    );
  });
  worker.on('exit', (code) => {
    // After an 'error' the failure is already logged; a clean close is not a failure.
    const unexpected = alive && !closing;
    alive = false;
    if (unexpected)
      log.error(
        { code: ErrorCodes.DISPLAY_UNAVAILABLE, exitCode: code },
        'display worker exited; payments continue without a display',
      );
  });

  const post = (message: ToDisplay) => {
    if (alive && !closing) worker.postMessage(message);
  };
  if (options.machine) post({ type: 'show', screen: idleScreen(options.machine.uniQr) });

  return {
    port: channel.port2,
    show: (screen) => post({ type: 'show', screen }),
    memory: () => {
      post({ type: 'memory' });
      return lastMemory;
    },
    async close() {
      if (closing) return exited;
      if (alive) worker.postMessage({ type: 'shutdown' } satisfies ToDisplay);
      closing = true;
      const timer = setTimeout(() => void worker.terminate(), CLOSE_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
