/**
 * The daemon's main thread: the machine loop (serial port, codec, reader state machine, local
 * vend approval), GPIO, the systemd watchdog; plus the start, supervision and orderly stop of
 * the payment and display workers. Nothing here awaits the network, SQLite or rendering.
 */
import { vmcFactsPath } from '../mdb/facts-file.js';
import { Worker } from 'node:worker_threads';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { QrvendConfig } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import { readSecretToken } from '../start/secret-file.js';
import { readHwSerial } from '../device/hw-serial.js';
import { terminalIdFor } from '../device/device-info.js';
import { openGpio } from '../device/gpio.js';
import { gpioFactsPath } from '../device/gpio/facts-file.js';
import { startDisplay, type DisplayHandle } from '../display/display-thread.js';
import { MachineLoop, createMdbTransport, type MemoryWire } from '../mdb/index.js';
import { StatusLedDriver } from '../mdb/status-led.js';
import { ageDeniedItems } from '../mdb/reader/index.js';
import type { MainToPayment, PaymentToMain, ThreadMemory } from '../ipc/messages.js';
import { heapLimitReport, PAYMENT_WORKER_LIMITS, quietCollector, threadMemory } from './heap-limits.js';
import { mallocTrimAvailable } from './malloc-trim.js';
import { createNotifier, type Notifier } from './systemd-notify.js';
import { raiseThisThread } from './thread-priority.js';
import type { PaymentWorkerData } from './payment-worker.js';
import { startFleetLink } from '../fleet/device/main-side.js';
import { RESTART_EXIT_CODE } from '../fleet/device/config-change.js';
import { startActivationRunner } from '../updates/activation-runner.js';
import { updatesDir } from '../updates/files.js';
import { dexFactsPathFor, openDexLink } from '../dex/link/index.js';
import { startDexReads, type DexReads } from '../dex/main-side.js';
import { monotonicNow, wallNow } from '../core/clock.js';
import { ErrorCodes } from '../core/errors.js';
import { vendJournalPathFor } from '../ledger/vend-journal.js';
import { VendJournalWriter } from '../ledger/vend-journal-writer.js';

export interface DaemonOptions {
  config: QrvendConfig;
  log: Logger;
  /** With mdb.port = "sim": receives the in-memory wire so a VmcSimulator can attach to its VMC end. */
  onSimWire?: (wire: MemoryWire) => void;
  notifier?: Notifier;
  /** Root for hardware facts (tests use fixture trees). */
  hardwareRoot?: string;
  /** How often a `stats` line (event-loop delay, reader counters, memory) is logged; 0 = never. */
  statsIntervalMs?: number;
  /** The site config file (config.set from the fleet layers its overlay over it); null = defaults only. */
  configFile?: string | null;
  /** Tick of the event-loop delay sampler, ms (config log.loopDelayResolutionMs). */
  loopDelayResolutionMs?: number;
}

export interface Daemon {
  /** Resolves when the payment worker is ready (ledger open, recovery done, Start listening). */
  readonly ready: Promise<{ startUrl: string | null }>;
  /** Resolves with the process exit code once everything has stopped. */
  readonly done: Promise<number>;
  readonly machineLoop: MachineLoop;
  stop(reason: string): Promise<number>;
  stats(): Record<string, unknown>;
}

const STOP_WORKER_TIMEOUT_MS = 20_000;
/** A DEX read under way at stop is not cut short (the VMC would be left mid-session), but not waited for beyond this. */
const STOP_DEX_TIMEOUT_MS = 10_000;
/** Quiet time before the main thread's between-sessions collection (see quietCollector). */
const MAIN_COLLECT_QUIET_MS = 2_000;

export function startDaemon(options: DaemonOptions): Daemon {
  const { config, log } = options;
  // Read before anything starts: a missing token is a configuration error (exit 78), not a crash loop.
  const secretToken = readSecretToken(config.start.secretTokenFile);
  const hwSerial = readHwSerial({ override: config.device.hwSerial, root: options.hardwareRoot, log }).serial;
  const terminalId = terminalIdFor(config, hwSerial);
  // First, while the process is small and no VMC is being answered: the one fork the main thread
  // waits for (systemd-notify.ts); every notification after it is a write to a pipe.
  const notifier = options.notifier ?? createNotifier(log);

  // Every tick wakes the machine loop: fine sampling is for benchmarks, not for an idle machine.
  const loopTickMs = options.loopDelayResolutionMs ?? config.log.loopDelayResolutionMs;
  const loopDelay = monitorEventLoopDelay({ resolution: loopTickMs });
  loopDelay.enable();

  const gpio = openGpio(config.gpio, log, { factsPath: gpioFactsPath(config.store.path) });
  const transport = createMdbTransport(config.mdb);
  if (transport.simWire !== null) options.onSimWire?.(transport.simWire);

  let display: DisplayHandle | null = null;
  if (config.display.framebuffer !== null || config.display.png !== null || config.display.terminal) {
    // QRVEND_TEST_SYSFS_ROOT: where the framebuffer's geometry is read (tests and `npm run bench`
    // point display.framebuffer at a regular file with a fixture beside it); /sys otherwise.
    const sysfsRoot = process.env.QRVEND_TEST_SYSFS_ROOT || undefined;
    display = startDisplay({ display: config.display, catalog: config.catalog, machine: config.machine, log, ...(sysfsRoot ? { sysfsRoot } : {}) });
  }

  // Messages for the payment worker sent before it exists (the fleet link's first observations) wait here.
  const beforeWorker: MainToPayment[] = [];
  let postToWorker: (message: MainToPayment) => void = (message) => beforeWorker.push(message);
  const fleet = startFleetLink({
    config,
    terminalId,
    configFile: options.configFile ?? null,
    log,
    toPayment: (message) => postToWorker(message),
    restart: (reason) => void stop(reason, RESTART_EXIT_CODE),
    onUpdateReady: (version, rolloutId) => activation.request({ kind: 'update', version, rolloutId }),
  });
  // Charged vend results, kept on this thread before they travel to the payment worker (docs/operations.md).
  const vendJournal = new VendJournalWriter({
    path: vendJournalPathFor(config.store.path),
    log,
    onTrouble: (active, detail) => postToWorker({ type: 'fleet.observe', code: 'VEND_JOURNAL_FAILED', active, detail }),
  });
  const workerData: PaymentWorkerData = {
    config,
    secretToken,
    hwSerial,
    terminalId,
    displayPort: display?.port ?? null,
    fleetPort: fleet.paymentPort,
    machineId: fleet.machineId,
    vendJournal: { path: vendJournalPathFor(config.store.path), run: vendJournal.run },
  };
  const worker = new Worker(new URL('./payment-worker.js', import.meta.url), {
    workerData,
    transferList: [...(display ? [display.port] : []), ...(fleet.paymentPort ? [fleet.paymentPort] : [])],
    resourceLimits: PAYMENT_WORKER_LIMITS,
  });
  postToWorker = (message) => worker.postMessage(message);
  for (const message of beforeWorker.splice(0)) worker.postMessage(message);
  // After the workers exist (threads inherit their creator's priority): only the machine loop is raised.
  const priority = raiseThisThread(log);
  let lastAvailability: string | null = null;
  const collector = quietCollector(MAIN_COLLECT_QUIET_MS);
  const toPayment = (message: MainToPayment) => {
    collector.touch();
    // Out of a session (ended, or the reader enabled at start-up): collect once the thread is quiet.
    if (message.type === 'reader.status' && message.status !== 'session' && message.status !== 'vend') collector.arm();
    // STATUS only on availability changes, never per vend: systemd logs nothing for it, but it is a wake-up there.
    if (message.type === 'reader.status') {
      const availability = message.status === 'session' || message.status === 'vend' ? 'enabled' : message.status;
      if (availability !== lastAvailability) notifier.status(`reader ${(lastAvailability = availability)}`);
    }
    vendJournal.observe(message);
    worker.postMessage(message);
  };

  // Activation of an update, or the restart an installed package asks for, waits for an idle machine (design section 12).
  const activation = startActivationRunner({
    dir: updatesDir(config),
    maxDeferralMs: config.updates.maxDeferralS * 1000,
    readerBusy: () => {
      const status = machineLoop.stats().status;
      return status === 'session' || status === 'vend' ? `reader ${status}` : null;
    },
    toPayment: (message) => worker.postMessage(message),
    restart: (reason) => void stop(reason, RESTART_EXIT_CODE),
    log,
    monotonicNow,
  });

  const machineLoop = new MachineLoop({
    mdb: config.mdb,
    decimalPlaces: config.machine.decimalPlaces,
    currencyNumeric: config.machine.currencyNumeric,
    openTransport: transport.open,
    devicePath: transport.devicePath,
    post: toPayment,
    log,
    boardReset: gpio.boardReset,
    onEnableWritten: () => {
      readerEnabled = true;
      readyWhenBoth();
    },
    ageDeniedItems: ageDeniedItems(config.staticQr.verifyAge, config.catalog),
    factsPath: vmcFactsPath(config.store.path),
    journalApproval: (approval) => vendJournal.approving(approval),
  });

  // The VMC's audit (design section 13): its own serial line, read here, processed by the payment worker.
  const dexReads: DexReads | null =
    config.dex.port === null
      ? null
      : startDexReads({
          dex: config.dex,
          link: openDexLink({ port: config.dex.port, protocol: config.dex.protocol, factsPath: dexFactsPathFor(config.store.path), maxFileBytes: config.dex.maxFileBytes, log }),
          post: toPayment,
          log,
          wallNow,
        });

  let health = { fault: false, gatewayOnline: true, outboxPending: 0, clockSteps: 0, starts: { requests: 0, accepted: 0, relayed: 0, relayedTooLate: 0, relayedDropped: 0, relayedUnvouched: 0 } };
  let paymentMemory: ThreadMemory | null = null;
  const heapLimit = heapLimitReport();
  if (!heapLimit.limited) {
    log.info({ heapLimitMb: heapLimit.heapLimitMb }, 'main thread heap is not capped: resident memory grows with garbage; start `qrvend run` through the installed qrvend command (it passes the heap flags)');
  }
  if (!mallocTrimAvailable()) {
    log.info({ addon: 'dist/src/native/qrvend-trim.node' }, 'malloc trimming is off (the addon was not built: Node without its headers): resident memory keeps what malloc freed; rebuild with `npm run build` where include/node/node_api.h is installed');
  }
  // The LED follows the board's polls and the reader's state (docs/devices.md, the LED).
  const statusLed = new StatusLedDriver(machineLoop, gpio.statusLed);

  // READY means the agent can take a payment: the VMC enabled the reader (so it polls us and will
  // offer sessions) and the payment worker is ready (ledger open, recovery done, Start listening).
  // Whichever comes last sends it; until then the watchdog pings extend the start timeout.
  let readerEnabled = false;
  let paymentReady = false;
  let readySent = false;
  function readyWhenBoth(): void {
    if (readySent || !readerEnabled || !paymentReady) return;
    readySent = true;
    notifier.ready('reader enabled, payments ready');
  }

  let resolveReady!: (v: { startUrl: string | null }) => void;
  let rejectReady!: (err: Error) => void;
  const ready = new Promise<{ startUrl: string | null }>((resolve, reject) => ((resolveReady = resolve), (rejectReady = reject)));
  ready.catch(() => {}); // a caller that never awaits `ready` must not see an unhandled rejection
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((r) => (resolveDone = r));
  let workerStopped: (() => void) | null = null;
  let workerGone = false;
  let stopping: Promise<number> | null = null;

  worker.on('message', (message: PaymentToMain) => {
    if (message.type !== 'health') collector.touch();
    switch (message.type) {
      case 'ready':
        paymentReady = true;
        readyWhenBoth();
        resolveReady({ startUrl: message.startUrl });
        return;
      case 'health':
        health = { ...health, gatewayOnline: message.gatewayOnline, outboxPending: message.outboxPending, clockSteps: message.clockSteps ?? 0, starts: message.starts ?? health.starts };
        if (message.memory) paymentMemory = message.memory;
        statusLed.setHealth(health);
        return;
      case 'fatal':
        log.fatal({ code: message.code }, `payment worker: ${message.message}`);
        rejectReady(new Error(`payment worker failed to start: ${message.message}`));
        health = { ...health, fault: true };
        statusLed.setHealth(health);
        void stop(`payment worker failed: ${message.code}`, message.code === 'SECRET_UNREADABLE' || message.code.startsWith('CONFIG') ? 78 : 70);
        return;
      case 'stopped':
        workerStopped?.();
        return;
      case 'update.activity':
        activation.activity(message.busy, message.held);
        return;
      case 'vend.journal':
        vendJournal.recorded(message.recordedKeys, message.takenOver);
        return;
      case 'dex.read':
        if (dexReads) dexReads.request(message.requestId);
        else toPayment({ type: 'dex.audit', requestId: message.requestId, trigger: 'command', atMs: wallNow(), read: { ok: false, code: ErrorCodes.DEX_PORT, message: 'dex.port is not set' } });
        return;
      default:
        machineLoop.handle(message);
    }
  });
  worker.on('error', (err) => {
    log.fatal({ err, code: 'INTERNAL' }, 'payment worker crashed');
    void stop('payment worker crashed', 70);
  });
  worker.on('exit', (code) => {
    workerGone = true;
    rejectReady(new Error(`payment worker exited (code ${code}) before it was ready`));
    workerStopped?.();
    if (stopping === null) {
      log.fatal({ exitCode: code }, 'payment worker exited unexpectedly');
      void stop('payment worker exited', 70);
    }
  });

  machineLoop.on('link', (change: { up: boolean; silent: boolean; reason: string | null }) => {
    fleet.onLink(change);
  });
  // Only on the start after a config.set from the fleet: confirms it, or rolls it back.
  const trialTimer = fleet.inTrial
    ? setInterval(() => {
        const status = machineLoop.stats().status;
        fleet.checkTrial({ paymentReady, readerUp: status !== 'offline' && status !== 'inactive' });
      }, 1_000)
    : null;
  trialTimer?.unref();
  const fleetStatsTimer =
    config.fleet.url !== null
      ? setInterval(() => fleet.stats({ reader: machineLoop.stats(), health, rssBytes: process.memoryUsage.rss(), gpio: gpio.stats() }), Math.max(1, config.fleet.healthIntervalS - 1) * 1000)
      : null;
  fleetStatsTimer?.unref();

  machineLoop.start();

  const watchdog = notifier.watchdogIntervalMs !== null ? setInterval(() => notifier.watchdog(), notifier.watchdogIntervalMs) : null;
  const statsEvery = options.statsIntervalMs ?? 60_000;
  const statsTimer = statsEvery > 0 ? setInterval(() => log.info({ stats: stats() }, 'stats'), statsEvery) : null;
  statsTimer?.unref();

  function stats(): Record<string, unknown> {
    // The histogram holds whole intervals between the sampler's ticks: an idle loop reads the tick
    // itself (1.0-1.1 ms at 1 ms, ~100 ms in production). The delay is what is over the tick.
    const late = (ns: number) => Math.max(0, Math.round((ns / 1e6 - loopTickMs) * 100) / 100);
    const out = {
      reader: machineLoop.stats(),
      eventLoopDelayMs: { p50: late(loopDelay.percentile(50)), p99: late(loopDelay.percentile(99)), max: late(loopDelay.max), count: loopDelay.count, tickMs: loopTickMs },
      rssBytes: process.memoryUsage.rss(),
      // Per thread, so a real leak shows where it is (RSS alone mixes the isolates and the binary).
      // The display and fleet workers answer when asked (their figures are one interval old); null when off.
      memory: { main: threadMemory(), payment: paymentMemory, display: display?.memory() ?? null, fleet: fleet.memory(), mainHeapLimitMb: heapLimit.heapLimitMb },
      mainThreadNice: priority.nice,
      health,
      gpio: gpio.stats(),
    };
    loopDelay.reset();
    return out;
  }

  /** SIGTERM path: no new session, the vend in progress finishes or fails cleanly, then the ledger closes. */
  function stop(reason: string, exitCode = 0): Promise<number> {
    if (stopping) return stopping;
    stopping = (async () => {
      log.info({ reason }, 'stopping');
      notifier.stopping();
      if (trialTimer) clearInterval(trialTimer);
      activation.stop();
      if (fleetStatsTimer) clearInterval(fleetStatsTimer);
      // In parallel with the machine loop's stop: a stalled broker must not delay the end of sessions.
      const fleetStopped = fleet.stop().catch((err: unknown) => log.error({ err }, 'fleet link stop failed'));
      await machineLoop.stop().catch((err: unknown) => log.error({ err }, 'machine loop stop failed'));
      if (dexReads) await Promise.race([dexReads.stop(), new Promise((r) => setTimeout(r, STOP_DEX_TIMEOUT_MS).unref())]);
      const stopped = workerGone ? Promise.resolve() : new Promise<void>((r) => (workerStopped = r));
      toPayment({ type: 'shutdown' });
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), STOP_WORKER_TIMEOUT_MS).unref());
      if ((await Promise.race([stopped, timeout])) === 'timeout') log.error('payment worker did not stop in time');
      await worker.terminate();
      vendJournal.close();
      await fleetStopped;
      await display?.close();
      gpio.close();
      if (watchdog) clearInterval(watchdog);
      if (statsTimer) clearInterval(statsTimer);
      collector.cancel();
      loopDelay.disable();
      log.info({ exitCode }, 'stopped');
      resolveDone(exitCode);
      return exitCode;
    })();
    return stopping;
  }

  return { ready, done, machineLoop, stop: (reason) => stop(reason), stats };
}
