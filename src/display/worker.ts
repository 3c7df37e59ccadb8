/**
 * The display worker (entry point of a worker thread): receives ToDisplay messages from its owner
 * and, through an optional extra port, from other workers (the payment worker); draws only the
 * newest pending screen; answers `rendered` and, once per failing output, `unavailable`.
 *
 * Terminal text goes straight to fd 1 with writeSync, never through the main thread's stdout.
 */
import { writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createLogger, type LogLevel } from '../core/log.js';
import { threadMemory } from '../core/thread-memory.js';
import type { FromDisplay, Screen, ToDisplay } from '../ipc/messages.js';
import { LatestOnly } from './coalesce.js';
import type { ProductCatalog } from './context.js';
import { DisplayOutputs, type DisplayConfig } from './outputs/index.js';

export interface DisplayWorkerData {
  display: DisplayConfig;
  catalog: ProductCatalog;
  sysfsRoot: string;
  logLevel: LogLevel;
  /** Where the worker logs: its owner's log file (logFileOf), or null for stdout. */
  logFile: string | null;
  ansi: boolean;
  /** A second way in for ToDisplay messages (handed to another worker by the owner). */
  port: MessagePort | null;
}

const data = workerData as DisplayWorkerData;
const owner = parentPort!;
const log = createLogger({ level: data.logLevel, name: 'display', sync: true, file: data.logFile });
const post = (message: FromDisplay): void => owner.postMessage(message);

const outputs = new DisplayOutputs({
  display: data.display,
  catalog: data.catalog,
  sysfsRoot: data.sysfsRoot,
  ansi: data.ansi,
  writeTerminal: (text) => {
    writeSync(1, text);
  },
  onUnavailable: (output, reason) => post({ type: 'unavailable', output, reason }),
  onRecovered: (output) => log.info({ output }, 'display output works again'),
  onRenderError: (err) => log.warn({ err }, 'screen could not be drawn as asked; a notice is shown instead'),
});

let ticker: NodeJS.Timeout | null = null;

function scheduleTick(): void {
  if (ticker !== null) clearTimeout(ticker);
  ticker = null;
  const delay = outputs.nextTickInMs();
  if (delay === null) return;
  ticker = setTimeout(() => {
    ticker = null;
    guarded('countdown redraw', () => outputs.tick());
    scheduleTick();
  }, delay);
}

/** Nothing the display does may end the worker: log and carry on. */
function guarded(what: string, action: () => void): void {
  try {
    action();
  } catch (err) {
    log.error({ err }, `display: ${what} failed`);
  }
}

const screens = new LatestOnly<Screen>((screen) => {
  const started = performance.now();
  guarded(`drawing the ${screen.kind} screen`, () => outputs.show(screen));
  post({ type: 'rendered', kind: screen.kind, ms: performance.now() - started });
  scheduleTick();
});

function shutdown(): void {
  screens.clear();
  if (ticker !== null) clearTimeout(ticker);
  ticker = null;
  guarded('closing outputs', () => outputs.close());
  // With no listeners and no timers left the worker's event loop ends and the thread exits.
  owner.off('message', onMessage);
  data.port?.close();
}

function onMessage(message: ToDisplay): void {
  if (message.type === 'show') screens.push(message.screen);
  else if (message.type === 'catalog') guarded('changing the catalog', () => outputs.setCatalog(message.catalog));
  else if (message.type === 'memory') post({ type: 'memory', memory: threadMemory() });
  else if (message.type === 'shutdown') shutdown();
}

owner.on('message', onMessage);
data.port?.on('message', onMessage);
