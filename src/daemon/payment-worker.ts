/**
 * The payment worker thread (design section 5): ledger and outbox (SQLite), gateway client,
 * Start endpoint and the payment flows. It talks to the main thread (the machine loop) only
 * through MainToPayment / PaymentToMain messages, and to the display worker through a
 * MessagePort it was handed at start.
 */
// First: it must run before the libraries below are evaluated.
import './payment-worker-preload.js';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { QrvendConfig } from '../config/schema.js';
import { createLogger } from '../core/log.js';
import { ErrorCodes, isQrvendError } from '../core/errors.js';
import { gatewayClientFromConfig } from '../gateway/client.js';
import { GatewayReachability } from '../gateway/reachability.js';
import { createRequestBuilders, highestAgeLimit, type RequestBuilders } from '../gateway/envelope.js';
import { openLedger, OutboxDrainer, recoverLedger, type Ledger } from '../ledger/index.js';
import { isLedgerLost } from '../ledger/identity.js';
import { VendJournalTakeover } from '../ledger/vend-journal-takeover.js';
import { ClockStepDetector, monotonicNow, wallNow } from '../core/clock.js';
import { createRelayedStart, createStartCore, RelayVouchers, startStartEndpoint, type RelayedStarts, type StartEndpoint } from '../start/index.js';
import { loadKeyring, type Keyring } from '../trust/index.js';
import { firmwareVersion } from '../device/device-info.js';
import type { MainToPayment, PaymentToFleet, PaymentToMain, Screen, ToDisplay } from '../ipc/messages.js';
import { outboxBodies } from '../flows/bodies.js';
import { realTimers, type FlowContext } from '../flows/context.js';
import { PaymentService } from '../flows/payment-service.js';
import { quietCollector, threadMemory } from './heap-limits.js';
import { CommandFailure, FleetPaymentSide } from '../fleet/device/payment-side.js';
import { DexAuditService, DexCommandError } from '../dex/audit/service.js';

export interface PaymentWorkerData {
  config: QrvendConfig;
  secretToken: Uint8Array;
  hwSerial: string;
  /** MachineInfo.TerminalId and the Start TerminalId this machine answers to. */
  terminalId: string;
  displayPort: MessagePort | null;
  /** The fleet worker's end (design section 10), or null when fleet.url is not set. */
  fleetPort: MessagePort | null;
  /** fleet.machineId, or the TerminalId. */
  machineId: string;
  /** The vend journal the machine loop writes (src/ledger/vend-journal-writer.ts), and its run id; null: none. */
  vendJournal: { path: string; run: string } | null;
}

const HEALTH_EVERY_MS = 5_000;
const LEDGER_RETRY_MS = 5_000;

/**
 * Answers a `cmd/start` forwarded by the fleet worker (src/start/relayed.ts); set once the ledger
 * and the flows are up. Until then a relayed Start is refused like a busy machine would be.
 */
let relayedStart: RelayedStarts | null = null;
async function answerRelayedStart(args: unknown): ReturnType<RelayedStarts['start']> {
  if (relayedStart === null) return { ok: false, error: { code: 'UNAVAILABLE', message: 'the payment worker is still starting' } };
  return relayedStart.start(args);
}
function answerRelayedConfirm(args: unknown): ReturnType<RelayedStarts['confirm']> {
  if (relayedStart === null) return { ok: false, error: { code: 'TOO_LATE', message: 'the payment worker restarted: no Start is held' } };
  return relayedStart.confirm(args);
}

/**
 * The relay keys a relayed Start is checked against (fleet.trustFile). A file that cannot be read
 * or is not valid leaves none trusted: every relayed Start is refused, and the log says why.
 * With the fleet link off no Start can be relayed, so the file is not read at all.
 */
function relayKeyring(file: string | null, log: ReturnType<typeof createLogger>): Keyring | null {
  if (file === null) return null;
  try {
    return loadKeyring(file);
  } catch (err) {
    log.error({ err: (err as Error).message }, 'fleet.trustFile cannot be used: relayed Starts are refused');
    return null;
  }
}

const data = workerData as PaymentWorkerData;
/**
 * Between payments, give the heap's garbage back (see quietCollector): armed when a payment ends,
 * run once no message has passed for PAYMENT_COLLECT_QUIET_MS, so it does not land in the middle
 * of the next sale (collecting at once, as before, could delay a Start that came right after a
 * session by the collection's length).
 */
const PAYMENT_COLLECT_QUIET_MS = 2_000;
const collector = quietCollector(PAYMENT_COLLECT_QUIET_MS);
const { config } = data;
const log = createLogger({ level: config.log.level, name: 'payment', sync: true });
const port = parentPort!;
const toMain = (message: PaymentToMain) => {
  if (message.type !== 'health') collector.touch();
  port.postMessage(message);
};
const show = (screen: Screen) => data.displayPort?.postMessage({ type: 'show', screen } satisfies ToDisplay);

let boardFirmware: string | null = null;
let builders: RequestBuilders = makeBuilders();
function makeBuilders(): RequestBuilders {
  const envelopeConfig = { ...config, machine: { ...config.machine, terminalId: data.terminalId } };
  return createRequestBuilders(envelopeConfig, { hwSerial: data.hwSerial, fwVersion: firmwareVersion(boardFirmware), type: config.device.type });
}

/** Opens the ledger; while the disk refuses, sessions are refused and the open is retried. */
async function openLedgerPatiently(): Promise<Ledger> {
  for (;;) {
    try {
      return openLedger({ path: config.store.path, decimalPlaces: config.machine.decimalPlaces, logger: log, now: wallNow });
    } catch (err) {
      if (isLedgerLost(err)) {
        toMain({ type: 'sessions.allowed', allowed: false, reason: 'ledger lost' });
        // No ledger, so no alarm event can be written: the fleet's status carries LEDGER_CORRUPT meanwhile.
        data.fleetPort?.postMessage({
          type: 'fleet.facts',
          facts: { reader: 'offline', readerDisabledRemotely: false, gateway: 'online', outbox: { pending: 0, dead: 0 }, alarms: ['LEDGER_CORRUPT'], queued: { sales: 0, alarms: 0, dropped: 0 } },
        } satisfies PaymentToFleet);
        log.error({ code: err.code, path: config.store.path, err: err.message, hint: err.hint }, 'ledger lost: refusing sessions until a technician runs `qrvend ledger acknowledge-loss`');
        await new Promise((r) => setTimeout(r, LEDGER_RETRY_MS));
        continue;
      }
      if (!isQrvendError(err, 'LEDGER_WRITE_FAILED')) throw err;
      toMain({ type: 'sessions.allowed', allowed: false, reason: 'storage unavailable' });
      log.error({ err, code: err.code }, 'ledger cannot be written: refusing sessions, retrying');
      await new Promise((r) => setTimeout(r, LEDGER_RETRY_MS));
    }
  }
}

async function main(): Promise<void> {
  // Messages from the machine loop can arrive before start-up finishes: keep them in order.
  const early: MainToPayment[] = [];
  let service: PaymentService | null = null;
  let stopping = false;
  let ready = false;
  let shutdownAsked = false;
  let shutdownNow: (() => void) | null = null;
  startFailed = () => {
    // Nothing to close: answer a shutdown at once so the daemon does not wait for its timeout.
    shutdownNow = () => toMain({ type: 'stopped' });
    if (shutdownAsked) shutdownNow();
  };
  let fleet: FleetPaymentSide | null = null;
  let dex: DexAuditService | null = null;
  const earlyAudits: Extract<MainToPayment, { type: 'dex.audit' }>[] = [];
  let lastReader: MainToPayment | null = null;
  let deliveriesInFlight = () => 0;
  let journal: VendJournalTakeover | null = null;
  /** A message for the flows; then the journaled results the ledger now holds go back to the main thread. */
  const handleInService = (message: MainToPayment) => {
    service!.handle(message);
    if (journal === null || message.type !== 'vend.result') return;
    journal.note(message);
    const recordedKeys = journal.settle();
    if (recordedKeys.length > 0) toMain({ type: 'vend.journal', recordedKeys, takenOver: journal.done });
  };
  port.on('message', (message: MainToPayment) => {
    collector.touch();
    if (message.type === 'dex.audit') {
      if (dex === null) earlyAudits.push(message);
      else dex.handle(message);
      return;
    }
    if (message.type === 'reader.status') lastReader = message;
    if (message.type === 'reader.status' || message.type === 'fleet.observe' || message.type === 'update.event') {
      fleet?.fromMain(message);
      if (message.type === 'fleet.observe' || message.type === 'update.event') return;
    }
    if (message.type === 'update.hold') {
      // Before the flows are up nothing is in flight, but nothing can be held either: not yet.
      if (service === null) toMain({ type: 'update.activity', busy: 'the payment worker is starting', held: false });
      else toMain({ type: 'update.activity', ...service.holdForUpdate(message.hold, deliveriesInFlight()), held: message.hold });
      return;
    }
    if (message.type === 'board.info') {
      boardFirmware = message.firmware;
      builders = makeBuilders();
    }
    if (message.type === 'shutdown') {
      shutdownAsked = true;
      if (shutdownNow) shutdownNow();
      else if (ready) void shutdown();
    }
    if (service === null) {
      early.push(message);
      return;
    }
    try {
      handleInService(message);
      if (message.type === 'session.ended' || message.type === 'vend.result' || message.type === 'vend.request.ended') collector.arm();
    } catch (err) {
      // A flow that throws must not take the worker (and every other payment) down with it.
      log.error({ err, code: isQrvendError(err) ? err.code : 'INTERNAL', type: message.type }, 'payment message handler failed');
    }
  });

  const ledger = await openLedgerPatiently();
  if (ledger.corruptionAlarm !== null) {
    log.error({ code: 'LEDGER_CORRUPT', ...ledger.corruptionAlarm }, 'ledger was damaged: moved aside and replaced; reconcile the old file by hand');
  }
  // The journal's account of the gateway going away and coming back (retries are at debug).
  const reachability = new GatewayReachability({ log });
  const gateway = gatewayClientFromConfig(config.gateway, log, (op, outcome) => reachability.observe(op, outcome));
  const bodies = outboxBodies(() => builders, { preauthAmount: config.staticQr.preauthAmount, decimalPlaces: config.machine.decimalPlaces });
  if (data.fleetPort !== null) {
    // Before the journal's take-over: a dynamic vend it records is a sale the fleet must hear of.
    const facts = { machineId: data.machineId, currencyCode: config.machine.currencyCode };
    ledger.fleetEvents.enable({ ...facts, maxQueuedAlarms: config.fleet.maxQueuedEvents });
  }
  // First what the machine loop journaled before a crash, so recovery counts those vends as sold.
  journal = data.vendJournal === null ? null : new VendJournalTakeover(ledger, { ...data.vendJournal, log });
  journal?.takeOver();
  if (journal?.done) toMain({ type: 'vend.journal', recordedKeys: [], takenOver: true });
  const recovery = recoverLedger(ledger, bodies, log);
  if (recovery.recovered.length > 0 || recovery.failed.length > 0) {
    log.warn({ recovered: recovery.recovered.length, failed: recovery.failed }, 'recovered transactions left open by the last run');
  }
  // Wall-clock steps (NTP after boot, a person): logged as one typed line (event clock.step, code
  // CLOCK_STEP) and counted in the health message; the fleet link's CLOCK_UNSYNCED alarm (issue 15)
  // is meant to be raised from that line. Persisted due times are re-based by the drainer.
  const clockSteps = new ClockStepDetector();
  const drainer = new OutboxDrainer({
    ledger,
    sender: gateway,
    store: config.store,
    logger: log,
    now: wallNow,
    clockSteps,
    onClockStep: (step, rows) =>
      log.warn({ event: 'clock.step', code: ErrorCodes.CLOCK_STEP, stepMs: step.stepMs, outboxRowsRebased: rows, steps: clockSteps.steps }, 'wall clock stepped: durations continue on the monotonic clock, outbox due times re-based'),
  });

  deliveriesInFlight = () => drainer.inFlightCount;

  const ctx: FlowContext = {
    ledger,
    gateway,
    builders: () => builders,
    bodies,
    toMain,
    show,
    outboxChanged: () => drainer.kick(),
    settings: {
      preauthAmount: config.staticQr.preauthAmount,
      decimalPlaces: config.machine.decimalPlaces,
      currencyCode: config.machine.currencyCode,
      paymentTimeoutMs: config.dynamicQr.paymentTimeoutMs,
      pollIntervalMs: config.dynamicQr.pollIntervalMs,
      uniQr: config.machine.uniQr,
      staticAgeLimit: config.staticQr.verifyAge ? highestAgeLimit(config) : null,
      readerGraceMs: config.display.readerGraceS * 1000,
    },
    log,
    now: wallNow,
    monotonicNow,
    timers: realTimers,
    alarm: (code, active, detail) => fleet?.observePayment(code, active, detail),
  };
  service = new PaymentService(ctx);
  dex = new DexAuditService({
    ledger,
    device: config.mdb.device,
    tolerance: config.dex.reconcileToleranceVends,
    configured: config.dex.port !== null,
    toMain,
    observe: (code, active, detail) => fleet?.observeAudit(code, active, detail),
    log,
  });
  const dexService = dex;
  if (data.fleetPort !== null) {
    fleet = new FleetPaymentSide({
      port: data.fleetPort,
      ledger,
      log,
      toMain,
      monotonicNow,
      kickOutbox: () => drainer.kick(),
      // cmd/start from `qrvend relay`: the machine's own Start decisions (src/start/relayed.ts).
      relayedStart: (args) => answerRelayedStart(args).then((o) => (o.ok ? o.result : Promise.reject(new CommandFailure(o.error.code, o.error.message)))),
      relayedConfirm: async (args) => {
        const o = answerRelayedConfirm(args);
        if (!o.ok) throw new CommandFailure(o.error.code, o.error.message);
        return o.result;
      },
      dexRead: () =>
        dexService.command().catch((err: unknown) => {
          if (!(err instanceof DexCommandError)) throw err;
          throw new CommandFailure(err.code === 'FAILED' ? 'UNAVAILABLE' : err.code, err.message);
        }),
    });
    if (lastReader !== null) fleet.fromMain(lastReader);
  }
  ledger.onWritability((writable, reason) => {
    toMain({ type: 'sessions.allowed', allowed: writable, reason: writable ? null : reason });
    if (!writable || service === null) return;
    // Write what the flows could not while the disk refused, then resolve what they let go of.
    service.retryUnclosed();
    const owned = service;
    const takenBefore = journal?.done ?? true;
    if (!takenBefore) journal!.takeOver();
    recoverLedger(ledger, bodies, log, { skip: (txId) => owned.owns(txId) });
    const recordedKeys = journal?.settle() ?? [];
    if (journal !== null && (recordedKeys.length > 0 || journal.done !== takenBefore)) {
      toMain({ type: 'vend.journal', recordedKeys, takenOver: journal.done });
    }
  });
  // Always say where we stand: an earlier "refused" (the open had to be retried) must be lifted.
  toMain({ type: 'sessions.allowed', allowed: ledger.writable, reason: ledger.writable ? null : ledger.unwritableReason });
  for (const message of early.splice(0)) handleInService(message);
  for (const message of earlyAudits.splice(0)) dex.handle(message);

  // One set of Start decisions for the endpoint and for Starts relayed over the fleet link.
  const startCore = createStartCore({
    start: config.start,
    acceptedTerminalIds: [data.terminalId],
    acceptedUniQr: [config.machine.uniQr],
    secretToken: Buffer.from(data.secretToken),
    hooks: service.startHooks(),
    log,
  });
  const vouchers = new RelayVouchers(relayKeyring(data.fleetPort === null ? null : config.fleet.trustFile, log), data.machineId);
  if (data.fleetPort !== null && config.fleet.acceptRelayedStart && !vouchers.usable) {
    log.warn({ trustFile: config.fleet.trustFile }, 'no relay key with the scope start is trusted (fleet.trustFile): relayed Starts are refused');
  }
  relayedStart = createRelayedStart({ core: startCore, vouchers });
  // start.listen null: no inbound port; Starts reach this machine only through `qrvend relay`.
  const endpoint: StartEndpoint | null =
    config.start.listen === null ? null : await startStartEndpoint({ start: config.start, acceptedTerminalIds: [data.terminalId], acceptedUniQr: [config.machine.uniQr], secretToken: Buffer.from(data.secretToken), hooks: service.startHooks(), log, core: startCore });
  if (endpoint === null) log.info('Start endpoint off (start.listen is null): Starts are taken only through the Start relay (fleet link)');
  drainer.start();

  let gatewayOnline = true;
  const health = setInterval(() => {
    drainer.observeClock();
    const counts = drainer.counts();
    // A backlog older than a minute means deliveries are failing: the gateway is out of reach.
    gatewayOnline = counts.oldestPendingAtMs === null || wallNow() - counts.oldestPendingAtMs < 60_000;
    const { requests, accepted, relayed, relayedTooLate, relayedDropped, relayedUnvouched } = startCore.stats.snapshot(0, { openConnections: 0, trackedSources: 0 });
    const starts = { requests, accepted, relayed, relayedTooLate, relayedDropped, relayedUnvouched };
    toMain({ type: 'health', outboxPending: counts.pending, outboxDead: counts.dead, gatewayOnline, memory: threadMemory(), clockSteps: clockSteps.steps, starts });
    fleet?.health({ gatewayOnline, outboxPending: counts.pending, outboxDead: counts.dead, clockSteps: clockSteps.steps });
  }, HEALTH_EVERY_MS);
  health.unref();

  const startUrl = endpoint?.url ?? null;
  toMain({ type: 'ready', startUrl });
  log.info({ startUrl, recovered: recovery.recovered.length }, 'payment worker ready');
  ready = true;
  if (shutdownAsked) void shutdown();

  async function shutdown(): Promise<void> {
    if (stopping) return;
    stopping = true;
    clearInterval(health);
    collector.cancel();
    // Nothing will confirm them now: closed with nothing owed (recovery would send a Cancel instead).
    relayedStart?.dropAll('the agent stopped before the relay confirmed');
    fleet?.close();
    dex?.close();
    service?.stop();
    await endpoint?.close();
    await drainer.stop();
    gateway.close();
    ledger.close();
    log.info('payment worker stopped');
    toMain({ type: 'stopped' });
  }
}

let startFailed: () => void = () => {};

main().catch((err: unknown) => {
  const code = isQrvendError(err) ? err.code : 'INTERNAL';
  log.fatal({ err, code }, 'payment worker failed to start');
  toMain({ type: 'fatal', code, message: isQrvendError(err) ? err.describe() : String(err) });
  startFailed();
});
