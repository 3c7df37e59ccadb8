/**
 * The payment worker's start-up, step by step: the ledger (retried while the disk refuses), the
 * gateway client, the vend journal's take-over and the recovery; then the outbox drainer, the flows,
 * the DEX audits, the fleet side, the Start decisions and endpoint, and the health reports
 * (docs/architecture.md, the threads; docs/operations.md).
 */
import type { MessagePort } from 'node:worker_threads';
import type { QrvendConfig } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import { ErrorCodes, isQrvendError } from '../core/errors.js';
import { gatewayClientFromConfig, type GatewayClient } from '../gateway/client.js';
import { GatewayReachability } from '../gateway/reachability.js';
import { highestAgeLimit, type RequestBuilders } from '../gateway/envelope.js';
import type { CatalogSwitch } from './catalog-switch.js';
import { openLedger, OutboxDrainer, recoverLedger, type Ledger } from '../ledger/index.js';
import { isLedgerLost } from '../ledger/identity.js';
import { VendJournalTakeover } from '../ledger/vend-journal-takeover.js';
import { ClockStepDetector, monotonicNow, wallNow } from '../core/clock.js';
import {
  createRelayedStart,
  createStartCore,
  RelayVouchers,
  startStartEndpoint,
  type RelayedStarts,
  type StartCore,
  type StartEndpoint,
} from '../start/index.js';
import { loadKeyring, type Keyring } from '../trust/index.js';
import type { MainToPayment, PaymentToFleet, PaymentToMain, Screen } from '../ipc/messages.js';
import { outboxBodies, type OutboxBodies } from '../flows/bodies.js';
import { realTimers, type FlowContext } from '../flows/context.js';
import { PaymentService } from '../flows/payment-service.js';
import { threadMemory } from './heap-limits.js';
import { CommandFailure, FleetPaymentSide } from '../fleet/machine-link/payment-side.js';
import { DexAuditService, DexCommandError } from '../dex/audit/service.js';

export interface PaymentWorkerData {
  config: QrvendConfig;
  secretToken: Uint8Array;
  hwSerial: string;
  /** MachineInfo.TerminalId and the Start TerminalId this machine answers to. */
  terminalId: string;
  displayPort: MessagePort | null;
  /** The fleet worker's end (docs/fleet.md), or null when fleet.url is not set. */
  fleetPort: MessagePort | null;
  /** fleet.machineId, or the TerminalId. */
  machineId: string;
  /** The vend journal the machine loop writes (src/ledger/vend-journal-writer.ts), and its run id; null: none. */
  vendJournal: { path: string; run: string } | null;
  /** Where the worker logs: the main thread's log file (logFileOf), or null for stdout. */
  logFile: string | null;
}

/** The payment worker's state the start-up fills in (src/daemon/payment-worker-owner.ts). */
export interface PaymentWorkerSide {
  readonly data: PaymentWorkerData;
  /** The fleet's catalog document, applied between sessions (catalog-switch.ts). */
  readonly catalogs: CatalogSwitch;
  readonly config: QrvendConfig;
  readonly log: Logger;
  service: PaymentService | null;
  fleet: FleetPaymentSide | null;
  dex: DexAuditService | null;
  journal: VendJournalTakeover | null;
  relayedStart: RelayedStarts | null;
  lastReader: MainToPayment | null;
  deliveriesInFlight: () => number;
  toMain(message: PaymentToMain): void;
  show(screen: Screen): void;
  currentBuilders(): RequestBuilders;
  /** The catalog the flows sell by: the site's, or the fleet's document over it (catalog-switch.ts). */
  currentCatalog(): QrvendConfig['catalog'];
}

export interface PaymentStores {
  ledger: Ledger;
  gateway: GatewayClient;
  bodies: OutboxBodies;
  /** Transactions the recovery resolved. */
  recovered: number;
}

export interface PaymentParts {
  drainer: OutboxDrainer;
  endpoint: StartEndpoint | null;
  health: NodeJS.Timeout;
}

const HEALTH_EVERY_MS = 5_000;
const LEDGER_RETRY_MS = 5_000;
/** A backlog older than this means deliveries are failing: the gateway is out of reach. */
const GATEWAY_OFFLINE_BACKLOG_MS = 60_000;

/** The ledger, the gateway client, the journal's take-over and the recovery of the last run. */
export async function openPaymentStores(side: PaymentWorkerSide): Promise<PaymentStores> {
  const { config, data, log } = side;
  const ledger = await openLedgerPatiently(side);
  if (ledger.corruptionAlarm !== null) {
    const message = 'ledger was damaged: moved aside and replaced; reconcile the old file by hand';
    log.error({ code: 'LEDGER_CORRUPT', ...ledger.corruptionAlarm }, message);
  }
  // The journal's account of the gateway going away and coming back (retries are at debug).
  const reachability = new GatewayReachability({ log });
  const gateway = gatewayClientFromConfig(config.gateway, log, (op, outcome) => reachability.observe(op, outcome));
  const settings = { preauthAmount: config.staticQr.preauthAmount, decimalPlaces: config.machine.decimalPlaces };
  const bodies = outboxBodies(() => side.currentBuilders(), settings);
  if (data.fleetPort !== null) {
    // Before the journal's take-over: a dynamic vend it records is a sale the fleet must hear of.
    const facts = { machineId: data.machineId, currencyCode: config.machine.currencyCode };
    ledger.fleetEvents.enable({ ...facts, maxQueuedAlarms: config.fleet.maxQueuedEvents });
  }
  // First what the machine loop journaled before a crash, so recovery counts those vends as sold.
  side.journal = data.vendJournal === null ? null : new VendJournalTakeover(ledger, { ...data.vendJournal, log });
  side.journal?.takeOver();
  if (side.journal?.done) side.toMain({ type: 'vend.journal', recordedKeys: [], takenOver: true });
  const recovery = recoverLedger(ledger, bodies, log);
  if (recovery.recovered.length > 0 || recovery.failed.length > 0) {
    const counts = { recovered: recovery.recovered.length, failed: recovery.failed };
    log.warn(counts, 'recovered transactions left open by the last run');
  }
  return { ledger, gateway, bodies, recovered: recovery.recovered.length };
}

/**
 * Everything after the stores; `flowsUp` runs once the flows, the audits and the fleet side exist
 * (the worker hands them the messages that came early).
 */
export async function startPaymentParts(
  side: PaymentWorkerSide,
  stores: PaymentStores,
  flowsUp: () => void,
): Promise<PaymentParts> {
  const { ledger } = stores;
  // Wall-clock steps (NTP after boot, a person): logged as one typed line (event clock.step, code
  // CLOCK_STEP) and counted in the health message (docs/operations.md). Persisted due times are
  // re-based by the drainer.
  const clockSteps = new ClockStepDetector();
  const drainer = createDrainer(side, stores, clockSteps);
  side.deliveriesInFlight = () => drainer.inFlightCount;
  const service = startFlows(side, stores, drainer);
  watchWritability(side, stores, service);
  // Always say where we stand: an earlier "refused" (the open had to be retried) must be lifted.
  const reason = ledger.writable ? null : ledger.unwritableReason;
  side.toMain({ type: 'sessions.allowed', allowed: ledger.writable, reason });
  flowsUp();
  const { startCore, endpoint } = await startStarts(side, service);
  drainer.start();
  const health = startHealthReports(side, drainer, startCore, clockSteps);
  return { drainer, endpoint, health };
}

/** Opens the ledger; while the disk refuses, sessions are refused and the open is retried. */
async function openLedgerPatiently(side: PaymentWorkerSide): Promise<Ledger> {
  const { config, data, log } = side;
  for (;;) {
    try {
      const { decimalPlaces } = config.machine;
      return openLedger({ path: config.store.path, decimalPlaces, logger: log, now: wallNow });
    } catch (err) {
      if (isLedgerLost(err)) {
        side.toMain({ type: 'sessions.allowed', allowed: false, reason: 'ledger lost' });
        // No ledger, so no alarm event can be written: the fleet's status carries LEDGER_CORRUPT meanwhile.
        data.fleetPort?.postMessage(ledgerLostFacts());
        const hint = 'ledger lost: refusing sessions until a technician runs `qrvend ledger acknowledge-loss`';
        log.error({ code: err.code, path: config.store.path, err: err.message, hint: err.hint }, hint);
        await new Promise((r) => setTimeout(r, LEDGER_RETRY_MS));
        continue;
      }
      if (!isQrvendError(err, 'LEDGER_WRITE_FAILED')) throw err;
      side.toMain({ type: 'sessions.allowed', allowed: false, reason: 'storage unavailable' });
      log.error({ err, code: err.code }, 'ledger cannot be written: refusing sessions, retrying');
      await new Promise((r) => setTimeout(r, LEDGER_RETRY_MS));
    }
  }
}

function ledgerLostFacts(): PaymentToFleet {
  return {
    type: 'fleet.facts',
    facts: {
      reader: 'offline',
      readerDisabledRemotely: false,
      gateway: 'online',
      outbox: { pending: 0, dead: 0 },
      alarms: ['LEDGER_CORRUPT'],
      queued: { sales: 0, alarms: 0, dropped: 0 },
    },
  };
}

function createDrainer(side: PaymentWorkerSide, stores: PaymentStores, clockSteps: ClockStepDetector): OutboxDrainer {
  const { config, log } = side;
  return new OutboxDrainer({
    ledger: stores.ledger,
    sender: stores.gateway,
    store: config.store,
    logger: log,
    now: wallNow,
    clockSteps,
    onClockStep: (step, rows) => {
      const facts = { event: 'clock.step', code: ErrorCodes.CLOCK_STEP, stepMs: step.stepMs, outboxRowsRebased: rows };
      const why = 'wall clock stepped: durations continue on the monotonic clock, outbox due times re-based';
      log.warn({ ...facts, steps: clockSteps.steps }, why);
    },
  });
}

/** The flows, the DEX audits and the fleet's payment side. */
function startFlows(side: PaymentWorkerSide, stores: PaymentStores, drainer: OutboxDrainer): PaymentService {
  const { config, log } = side;
  const { ledger, gateway, bodies } = stores;
  const ctx: FlowContext = {
    ledger,
    gateway,
    builders: () => side.currentBuilders(),
    bodies,
    toMain: (message) => side.toMain(message),
    show: (screen) => side.show(screen),
    outboxChanged: () => drainer.kick(),
    settings: {
      preauthAmount: config.staticQr.preauthAmount,
      decimalPlaces: config.machine.decimalPlaces,
      currencyCode: config.machine.currencyCode,
      paymentTimeoutMs: config.dynamicQr.paymentTimeoutMs,
      pollIntervalMs: config.dynamicQr.pollIntervalMs,
      uniQr: config.machine.uniQr,
      staticAgeLimit: config.staticQr.verifyAge ? highestAgeLimit({ catalog: side.currentCatalog() }) : null,
      readerGraceMs: config.display.readerGraceS * 1000,
    },
    log,
    now: wallNow,
    monotonicNow,
    timers: realTimers,
    alarm: (code, active, detail) => side.fleet?.observePayment(code, active, detail),
  };
  const service = new PaymentService(ctx);
  side.service = service;
  const dex = new DexAuditService({
    ledger,
    device: config.mdb.device,
    tolerance: config.dex.reconcileToleranceVends,
    configured: config.dex.port !== null,
    toMain: (message) => side.toMain(message),
    observe: (code, active, detail) => side.fleet?.observeAudit(code, active, detail),
    log,
  });
  side.dex = dex;
  if (side.data.fleetPort !== null) side.fleet = connectFleetSide(side, side.data.fleetPort, ledger, drainer, dex);
  return service;
}

function connectFleetSide(
  side: PaymentWorkerSide,
  port: MessagePort,
  ledger: Ledger,
  drainer: OutboxDrainer,
  dex: DexAuditService,
): FleetPaymentSide {
  const fleet = new FleetPaymentSide({
    port,
    ledger,
    log: side.log,
    toMain: (message) => side.toMain(message),
    monotonicNow,
    kickOutbox: () => drainer.kick(),
    // cmd/start from `qrvend relay`: the machine's own Start decisions (src/start/relayed.ts).
    relayedStart: async (args) => {
      const outcome = await answerRelayedStart(side.relayedStart, args);
      if (!outcome.ok) throw new CommandFailure(outcome.error.code, outcome.error.message);
      return outcome.result;
    },
    relayedConfirm: async (args) => {
      const outcome = answerRelayedConfirm(side.relayedStart, args);
      if (!outcome.ok) throw new CommandFailure(outcome.error.code, outcome.error.message);
      return outcome.result;
    },
    dexRead: () =>
      dex.command().catch((err: unknown) => {
        if (!(err instanceof DexCommandError)) throw err;
        throw new CommandFailure(err.code === 'FAILED' ? 'UNAVAILABLE' : err.code, err.message);
      }),
    catalog: (version, catalog) => side.catalogs.offer(version, catalog),
  });
  if (side.lastReader !== null) fleet.fromMain(side.lastReader);
  fleet.catalogApplied(side.catalogs.running);
  return fleet;
}

/** Until the flows are up a relayed Start is refused like a busy machine would be. */
function answerRelayedStart(relayed: RelayedStarts | null, args: unknown): ReturnType<RelayedStarts['start']> {
  if (relayed === null) {
    const error = { code: 'UNAVAILABLE' as const, message: 'the payment worker is still starting' };
    return Promise.resolve({ ok: false, error });
  }
  return relayed.start(args);
}

function answerRelayedConfirm(relayed: RelayedStarts | null, args: unknown): ReturnType<RelayedStarts['confirm']> {
  if (relayed === null) {
    return { ok: false, error: { code: 'TOO_LATE', message: 'the payment worker restarted: no Start is held' } };
  }
  return relayed.confirm(args);
}

/** When the disk takes writes again: write what the flows could not, then resolve what they let go of. */
function watchWritability(side: PaymentWorkerSide, stores: PaymentStores, service: PaymentService): void {
  const { ledger, bodies } = stores;
  ledger.onWritability((writable, reason) => {
    side.toMain({ type: 'sessions.allowed', allowed: writable, reason: writable ? null : reason });
    if (!writable) return;
    service.retryUnclosed();
    const { journal } = side;
    const takenBefore = journal?.done ?? true;
    if (!takenBefore) journal!.takeOver();
    recoverLedger(ledger, bodies, side.log, { skip: (txId) => service.owns(txId) });
    const recordedKeys = journal?.settle() ?? [];
    if (journal !== null && (recordedKeys.length > 0 || journal.done !== takenBefore)) {
      side.toMain({ type: 'vend.journal', recordedKeys, takenOver: journal.done });
    }
  });
}

/** One set of Start decisions for the endpoint and for Starts relayed over the fleet link. */
async function startStarts(
  side: PaymentWorkerSide,
  service: PaymentService,
): Promise<{ startCore: StartCore; endpoint: StartEndpoint | null }> {
  const { config, data, log } = side;
  const startCore = createStartCore({
    start: config.start,
    acceptedTerminalIds: [data.terminalId],
    acceptedUniQr: [config.machine.uniQr],
    secretToken: Buffer.from(data.secretToken),
    hooks: service.startHooks(),
    log,
  });
  const keyring = relayKeyring(data.fleetPort === null ? null : config.fleet.trustFile, log);
  const vouchers = new RelayVouchers(keyring, data.machineId);
  if (data.fleetPort !== null && config.fleet.acceptRelayedStart && !vouchers.usable) {
    const why = 'no relay key with the scope start is trusted (fleet.trustFile): relayed Starts are refused';
    log.warn({ trustFile: config.fleet.trustFile }, why);
  }
  side.relayedStart = createRelayedStart({ core: startCore, vouchers });
  // start.listen null: no inbound port; Starts reach this machine only through `qrvend relay`.
  if (config.start.listen === null) {
    log.info('Start endpoint off (start.listen is null): Starts are taken only through the Start relay (fleet link)');
    return { startCore, endpoint: null };
  }
  const endpoint = await startStartEndpoint({
    start: config.start,
    acceptedTerminalIds: [data.terminalId],
    acceptedUniQr: [config.machine.uniQr],
    secretToken: Buffer.from(data.secretToken),
    hooks: service.startHooks(),
    log,
    core: startCore,
  });
  return { startCore, endpoint };
}

/**
 * The relay keys a relayed Start is checked against (fleet.trustFile). A file that cannot be read
 * or is not valid leaves none trusted: every relayed Start is refused, and the log says why.
 * With the fleet link off no Start can be relayed, so the file is not read at all.
 */
function relayKeyring(file: string | null, log: Logger): Keyring | null {
  if (file === null) return null;
  try {
    return loadKeyring(file);
  } catch (err) {
    log.error({ err: (err as Error).message }, 'fleet.trustFile cannot be used: relayed Starts are refused');
    return null;
  }
}

function startHealthReports(
  side: PaymentWorkerSide,
  drainer: OutboxDrainer,
  startCore: StartCore,
  clockSteps: ClockStepDetector,
): NodeJS.Timeout {
  const health = setInterval(() => {
    drainer.observeClock();
    const counts = drainer.counts();
    const oldest = counts.oldestPendingAtMs;
    const gatewayOnline = oldest === null || wallNow() - oldest < GATEWAY_OFFLINE_BACKLOG_MS;
    const snapshot = startCore.stats.snapshot(0, { openConnections: 0, trackedSources: 0 });
    const { requests, accepted, relayed, relayedTooLate, relayedDropped, relayedUnvouched } = snapshot;
    const starts = { requests, accepted, relayed, relayedTooLate, relayedDropped, relayedUnvouched };
    const outbox = { outboxPending: counts.pending, outboxDead: counts.dead };
    const memory = threadMemory();
    side.toMain({ type: 'health', ...outbox, gatewayOnline, memory, clockSteps: clockSteps.steps, starts });
    side.fleet?.health({ gatewayOnline, ...outbox, clockSteps: clockSteps.steps });
  }, HEALTH_EVERY_MS);
  health.unref();
  return health;
}
