/**
 * The daemon's main thread: the machine loop (serial port, codec, reader state machine, local
 * vend approval), GPIO, the systemd watchdog; plus the start, supervision and orderly stop of
 * the payment and display workers. Nothing here awaits the network, SQLite or rendering
 * (docs/architecture.md, the threads).
 */
import { vmcFactsPath } from '../mdb/facts-file.js';
import type { QrvendConfig } from '../config/schema.js';
import { logFileOf, type Logger } from '../core/log.js';
import { openGpio, type Gpio } from '../device/gpio.js';
import { gpioFactsPath } from '../device/gpio/facts-file.js';
import type { DisplayHandle } from '../display/display-thread.js';
import { MachineLoop, createMdbTransport, type MemoryWire } from '../mdb/index.js';
import { ageDeniedItems } from '../mdb/reader/index.js';
import type { MainToPayment, PaymentToMain } from '../ipc/messages.js';
import { heapLimitReport, quietCollector, threadMemory } from './heap-limits.js';
import { createNotifier, type Notifier } from './systemd-notify.js';
import { raiseThisThread, type PriorityResult } from './thread-priority.js';
import { startFleetLink, type FleetMain } from '../fleet/machine-link/main-side.js';
import { startActivationRunner, type ActivationRunner } from '../updates/activation-runner.js';
import { updatesDir } from '../updates/files.js';
import { dexFactsPathFor, openDexLink } from '../dex/link/index.js';
import { startDexReads, type DexReads } from '../dex/main-side.js';
import { monotonicNow, wallNow } from '../core/clock.js';
import { ErrorCodes, ExitCodes } from '../core/errors.js';
import { vendJournalPathFor } from '../ledger/vend-journal.js';
import { VendJournalWriter } from '../ledger/vend-journal-writer.js';
import { PaymentThread } from './payment-thread.js';
import { LoopDelay } from './loop-delay.js';
import { PaymentHealth } from './payment-health.js';
import { StatusLedDriver } from '../mdb/status-led.js';
import { ReadyGate, type PaymentReady } from './ready-gate.js';
import { logMemoryLimits, openDisplay, readIdentity, type Identity } from './main-thread-setup.js';

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
  /** The site config file (config.set from the fleet layers its overlay over it); null = none. */
  configFile?: string | null;
  /** Tick of the event-loop delay sampler, ms (config log.loopDelayResolutionMs). */
  loopDelayResolutionMs?: number;
}

const STOP_WORKER_TIMEOUT_MS = 20_000;
/** A DEX read under way at stop is not cut short (the VMC would be left mid-session), nor awaited beyond this. */
const STOP_DEX_TIMEOUT_MS = 10_000;
/** Quiet time before the main thread's between-sessions collection (see quietCollector). */
const MAIN_COLLECT_QUIET_MS = 2_000;
const TRIAL_CHECK_INTERVAL_MS = 1_000;

export class Daemon {
  /** Resolves when the payment worker is ready (ledger open, recovery done, Start listening). */
  readonly ready: Promise<PaymentReady>;
  /** Resolves with the process exit code once everything has stopped. */
  readonly done: Promise<number>;
  readonly machineLoop: MachineLoop;
  private readonly config: QrvendConfig;
  private readonly log: Logger;
  private readonly notifier: Notifier;
  private readonly loopDelay: LoopDelay;
  private readonly gpio: Gpio;
  private readonly display: DisplayHandle | null;
  private readonly payment = new PaymentThread();
  private readonly gate: ReadyGate;
  private readonly fleet: FleetMain;
  private readonly vendJournal: VendJournalWriter;
  private readonly priority: PriorityResult;
  private readonly collector = quietCollector(MAIN_COLLECT_QUIET_MS);
  private readonly activation: ActivationRunner;
  private readonly dexReads: DexReads | null;
  private readonly health: PaymentHealth;
  private readonly heapLimit = heapLimitReport();
  private readonly timers: { trial: NodeJS.Timeout | null; fleetStats: NodeJS.Timeout | null } = {
    trial: null,
    fleetStats: null,
  };
  private watchdog: NodeJS.Timeout | null = null;
  private statsTimer: NodeJS.Timeout | null = null;
  private stopping: Promise<number> | null = null;
  private resolveDone!: (code: number) => void;

  constructor(private readonly options: DaemonOptions) {
    const { config, log } = options;
    this.config = config;
    this.log = log;
    // Read before anything starts: a missing token is a configuration error (exit 78), not a crash loop.
    const identity = readIdentity(options);
    // First, while the process is small and no VMC is being answered: the one fork the main thread
    // waits for (systemd-notify.ts); every notification after it is a write to a pipe.
    this.notifier = options.notifier ?? createNotifier(log);
    this.gate = new ReadyGate(this.notifier);
    this.ready = this.gate.ready;
    this.done = new Promise<number>((resolve) => (this.resolveDone = resolve));
    this.loopDelay = new LoopDelay(options.loopDelayResolutionMs ?? config.log.loopDelayResolutionMs);
    this.gpio = openGpio(config.gpio, log, { factsPath: gpioFactsPath(config.store.path) });
    const transport = createMdbTransport(config.mdb);
    if (transport.simWire !== null) options.onSimWire?.(transport.simWire);
    this.display = openDisplay(config, log);
    this.fleet = this.startFleet(identity.terminalId);
    // Charged vend results, kept on this thread before they travel to the payment worker (docs/operations.md).
    this.vendJournal = new VendJournalWriter({
      path: vendJournalPathFor(config.store.path),
      log,
      onTrouble: (active, detail) =>
        this.payment.post({ type: 'fleet.observe', code: 'VEND_JOURNAL_FAILED', active, detail }),
    });
    this.spawnPaymentWorker(identity);
    // After the workers exist (threads inherit their creator's priority): only the machine loop is raised.
    this.priority = raiseThisThread(log);
    this.activation = this.startActivation();
    this.machineLoop = this.createMachineLoop(transport);
    this.dexReads = this.startDex();
    // The LED follows the board's polls and the reader's state, and the payment side's health.
    this.health = new PaymentHealth(new StatusLedDriver(this.machineLoop, this.gpio.statusLed));
    logMemoryLimits(log, this.heapLimit);
  }

  /** Starts the machine loop and the timers; the workers run from construction on. */
  start(): this {
    this.machineLoop.on('link', (change: { up: boolean; silent: boolean; reason: string | null }) => {
      this.fleet.onLink(change);
    });
    this.startFleetTimers();
    this.machineLoop.start();
    const { notifier } = this;
    if (notifier.watchdogIntervalMs !== null) {
      this.watchdog = setInterval(() => notifier.watchdog(), notifier.watchdogIntervalMs);
    }
    const statsEvery = this.options.statsIntervalMs ?? 60_000;
    if (statsEvery > 0) {
      this.statsTimer = setInterval(() => this.log.info({ stats: this.stats() }, 'stats'), statsEvery);
      this.statsTimer.unref();
    }
    return this;
  }

  stats(): Record<string, unknown> {
    return {
      reader: this.machineLoop.stats(),
      eventLoopDelayMs: this.loopDelay.takeFigures(),
      rssBytes: process.memoryUsage.rss(),
      // Per thread, so a real leak shows where it is (RSS alone mixes the isolates and the binary).
      // The display and fleet workers answer when asked (their figures are one interval old); null when off.
      memory: {
        main: threadMemory(),
        payment: this.health.paymentMemory,
        display: this.display?.memory() ?? null,
        fleet: this.fleet.memory(),
        mainHeapLimitMb: this.heapLimit.heapLimitMb,
      },
      mainThreadNice: this.priority.nice,
      health: this.health.figures,
      gpio: this.gpio.stats(),
    };
  }

  /** SIGTERM path: no new session, the vend in progress finishes or fails cleanly, then the ledger closes. */
  stop(reason: string, exitCode: number = ExitCodes.OK): Promise<number> {
    this.stopping ??= this.runStop(reason, exitCode);
    return this.stopping;
  }

  /** Every message of the payment worker, routed once; a kind left out does not compile. */
  private route(message: PaymentToMain): void {
    if (message.type !== 'health') this.collector.touch();
    switch (message.type) {
      case 'ready':
        this.gate.paymentReadyNow(message.startUrl);
        return;
      case 'health':
        this.health.fromPayment(message);
        return;
      case 'fatal':
        this.paymentFatal(message.code, message.message);
        return;
      case 'stopped':
        this.payment.stopped();
        return;
      case 'update.activity':
        this.activation.activity(message.busy, message.held);
        return;
      case 'vend.journal':
        this.vendJournal.recorded(message.recordedKeys, message.takenOver);
        return;
      case 'dex.read':
        this.readDex(message.requestId);
        return;
      case 'session.begin':
      case 'session.cancel':
      case 'vend.approve':
      case 'vend.deny':
      case 'sessions.allowed':
      case 'reader.service':
      case 'catalog.set':
        this.machineLoop.handle(message);
        return;
      default: {
        const unknownKind: never = message;
        this.log.error({ message: unknownKind }, 'payment worker sent a message of an unknown kind');
      }
    }
  }

  /** What the machine loop and the DEX reads send the payment worker (and the stop's shutdown). */
  private toPayment(message: MainToPayment): void {
    this.collector.touch();
    if (message.type === 'reader.status') {
      // Out of a session (ended, or the reader enabled at start-up): collect once the thread is quiet.
      if (message.status !== 'session' && message.status !== 'vend') this.collector.arm();
      this.gate.readerStatus(message.status);
    }
    this.vendJournal.observe(message);
    this.payment.post(message);
  }

  private paymentFatal(code: string, text: string): void {
    this.log.fatal({ code }, `payment worker: ${text}`);
    this.gate.paymentFailed(new Error(`payment worker failed to start: ${text}`));
    this.health.fault();
    const configuration = code === 'SECRET_UNREADABLE' || code.startsWith('CONFIG');
    void this.stop(`payment worker failed: ${code}`, configuration ? ExitCodes.CONFIG : ExitCodes.SOFTWARE);
  }

  private readDex(requestId: number): void {
    if (this.dexReads) {
      this.dexReads.request(requestId);
      return;
    }
    const read = { ok: false as const, code: ErrorCodes.DEX_PORT, message: 'dex.port is not set' };
    this.toPayment({ type: 'dex.audit', requestId, trigger: 'command', atMs: wallNow(), read });
  }

  private startFleet(terminalId: string): FleetMain {
    return startFleetLink({
      config: this.config,
      terminalId,
      configFile: this.options.configFile ?? null,
      log: this.log,
      // Before the payment worker exists (the link's first observations), these wait for it.
      toPayment: (message) => this.payment.post(message),
      restart: (reason) => void this.stop(reason, ExitCodes.RESTART),
      onUpdateReady: (version, rolloutId) => this.activation.request({ kind: 'update', version, rolloutId }),
    });
  }

  private spawnPaymentWorker(identity: Identity): void {
    const { display, fleet } = this;
    const workerData = {
      config: this.config,
      ...identity,
      displayPort: display?.port ?? null,
      fleetPort: fleet.paymentPort,
      machineId: fleet.machineId,
      vendJournal: { path: vendJournalPathFor(this.config.store.path), run: this.vendJournal.run },
      logFile: logFileOf(this.log),
    };
    const transferList = [...(display ? [display.port] : []), ...(fleet.paymentPort ? [fleet.paymentPort] : [])];
    this.payment.spawn(workerData, transferList, {
      message: (message) => this.route(message),
      error: (err) => {
        this.log.fatal({ err, code: 'INTERNAL' }, 'payment worker crashed');
        void this.stop('payment worker crashed', ExitCodes.SOFTWARE);
      },
      exit: (code) => {
        this.gate.paymentFailed(new Error(`payment worker exited (code ${code}) before it was ready`));
        if (this.stopping !== null) return;
        this.log.fatal({ exitCode: code }, 'payment worker exited unexpectedly');
        void this.stop('payment worker exited', ExitCodes.SOFTWARE);
      },
    });
  }

  /**
   * Activation of an update, or the restart an installed package asks for, waits for an idle machine
   * (docs/updates-on-the-machine.md).
   */
  private startActivation(): ActivationRunner {
    return startActivationRunner({
      dir: updatesDir(this.config),
      maxDeferralMs: this.config.updates.maxDeferralS * 1000,
      readerBusy: () => {
        const status = this.machineLoop.stats().status;
        return status === 'session' || status === 'vend' ? `reader ${status}` : null;
      },
      toPayment: (message) => this.payment.post(message),
      restart: (reason) => void this.stop(reason, ExitCodes.RESTART),
      log: this.log,
      monotonicNow,
    });
  }

  private createMachineLoop(transport: ReturnType<typeof createMdbTransport>): MachineLoop {
    const { config } = this;
    return new MachineLoop({
      mdb: config.mdb,
      decimalPlaces: config.machine.decimalPlaces,
      currencyNumeric: config.machine.currencyNumeric,
      openTransport: transport.open,
      devicePath: transport.devicePath,
      post: (message) => this.toPayment(message),
      log: this.log,
      boardReset: this.gpio.boardReset,
      onEnableWritten: () => this.gate.readerEnabledNow(),
      ageDeniedItems: ageDeniedItems(config.staticQr.verifyAge, config.catalog),
      factsPath: vmcFactsPath(config.store.path),
      // The approval is journaled just before C,VEND leaves (docs/decisions/sales-and-recovery.md).
      journalApproval: (approval) => this.vendJournal.approving(approval),
    });
  }

  /** The VMC's audit (docs/dex.md): its own serial line, read here, processed by the payment worker. */
  private startDex(): DexReads | null {
    const { dex, store } = this.config;
    if (dex.port === null) return null;
    const { port, protocol, maxFileBytes } = dex;
    const factsPath = dexFactsPathFor(store.path);
    return startDexReads({
      dex,
      link: openDexLink({ port, protocol, factsPath, maxFileBytes, log: this.log }),
      post: (message) => this.toPayment(message),
      log: this.log,
      wallNow,
    });
  }

  private startFleetTimers(): void {
    const { fleet, machineLoop } = this;
    // Only on the start after a config.set from the fleet: confirms it, or rolls it back.
    if (fleet.inTrial) {
      this.timers.trial = setInterval(() => {
        const status = machineLoop.stats().status;
        const readerUp = status !== 'offline' && status !== 'inactive';
        fleet.checkTrial({ paymentReady: this.gate.paymentReady, readerUp });
      }, TRIAL_CHECK_INTERVAL_MS);
      this.timers.trial.unref();
    }
    if (this.config.fleet.url !== null) {
      const everyMs = Math.max(1, this.config.fleet.healthIntervalS - 1) * 1000;
      this.timers.fleetStats = setInterval(() => {
        const rssBytes = process.memoryUsage.rss();
        fleet.stats({ reader: machineLoop.stats(), health: this.health.figures, rssBytes, gpio: this.gpio.stats() });
      }, everyMs);
      this.timers.fleetStats.unref();
    }
  }

  private async runStop(reason: string, exitCode: number): Promise<number> {
    const { log } = this;
    log.info({ reason }, 'stopping');
    this.notifier.stopping();
    if (this.timers.trial) clearInterval(this.timers.trial);
    this.activation.stop();
    if (this.timers.fleetStats) clearInterval(this.timers.fleetStats);
    // In parallel with the machine loop's stop: a stalled broker must not delay the end of sessions.
    const fleetStopped = this.fleet.stop().catch((err: unknown) => log.error({ err }, 'fleet link stop failed'));
    await this.machineLoop.stop().catch((err: unknown) => log.error({ err }, 'machine loop stop failed'));
    if (this.dexReads) {
      await Promise.race([this.dexReads.stop(), new Promise((r) => setTimeout(r, STOP_DEX_TIMEOUT_MS).unref())]);
    }
    const sendShutdown = () => this.toPayment({ type: 'shutdown' });
    if (!(await this.payment.shutdown(sendShutdown, STOP_WORKER_TIMEOUT_MS))) {
      log.error('payment worker did not stop in time');
    }
    this.vendJournal.close();
    await fleetStopped;
    await this.display?.close();
    this.gpio.close();
    if (this.watchdog) clearInterval(this.watchdog);
    if (this.statsTimer) clearInterval(this.statsTimer);
    this.collector.cancel();
    this.loopDelay.disable();
    log.info({ exitCode }, 'stopped');
    this.resolveDone(exitCode);
    return exitCode;
  }
}

/** Constructs the main thread's owner and starts it. */
export function startDaemon(options: DaemonOptions): Daemon {
  return new Daemon(options).start();
}
