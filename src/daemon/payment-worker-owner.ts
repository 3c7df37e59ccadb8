/**
 * The payment worker thread's owner (docs/architecture.md, the threads): ledger and outbox (SQLite),
 * gateway client, Start endpoint and the payment flows. It talks to the main thread (the machine
 * loop) only through MainToPayment / PaymentToMain messages, and to the display worker through a
 * MessagePort it was handed at start. Every message of the main thread is routed once, here.
 */
import type { QrvendConfig } from '../config/schema.js';
import { createLogger, type Logger } from '../core/log.js';
import { isQrvendError } from '../core/errors.js';
import { createRequestBuilders, type RequestBuilders } from '../gateway/envelope.js';
import type { OutboxDrainer } from '../ledger/index.js';
import type { VendJournalTakeover } from '../ledger/vend-journal-takeover.js';
import type { RelayedStarts, StartEndpoint } from '../start/index.js';
import { firmwareVersion } from '../device/device-info.js';
import type { MainToPayment, PaymentToMain, Screen, ToDisplay } from '../ipc/messages.js';
import type { PaymentService, FlowMessage } from '../flows/payment-service.js';
import { quietCollector } from './heap-limits.js';
import type { FleetPaymentSide } from '../fleet/machine-link/payment-side.js';
import type { DexAuditService } from '../dex/audit/service.js';
import { CatalogSwitch } from './catalog-switch.js';
import {
  openPaymentStores,
  startPaymentParts,
  type PaymentStores,
  type PaymentWorkerData,
  type PaymentWorkerSide,
} from './payment-start-up.js';

/** The main thread's end of the worker (parentPort). */
export interface MainPort {
  postMessage(message: PaymentToMain): void;
  on(event: 'message', listener: (message: MainToPayment) => void): void;
}

/**
 * Between payments, give the heap's garbage back (see quietCollector): armed when a payment ends,
 * run once no message has passed for PAYMENT_COLLECT_QUIET_MS, so it does not land in the middle
 * of the next sale (collecting at once, as before, could delay a Start that came right after a
 * session by the collection's length).
 */
const PAYMENT_COLLECT_QUIET_MS = 2_000;

/** What runs once start-up is through: closed in this order by the shutdown. */
interface Running {
  stores: PaymentStores;
  drainer: OutboxDrainer;
  endpoint: StartEndpoint | null;
  health: NodeJS.Timeout;
}

export class PaymentWorker implements PaymentWorkerSide {
  readonly config: QrvendConfig;
  readonly log: Logger;
  readonly collector = quietCollector(PAYMENT_COLLECT_QUIET_MS);
  /** The flows, once the ledger is open; until then their messages wait in `early`. */
  service: PaymentService | null = null;
  fleet: FleetPaymentSide | null = null;
  dex: DexAuditService | null = null;
  journal: VendJournalTakeover | null = null;
  /** Answers a `cmd/start` forwarded by the fleet worker (src/start/relayed.ts); set once the flows are up. */
  relayedStart: RelayedStarts | null = null;
  /** The last reader.status, for a fleet side created after it came. */
  lastReader: MainToPayment | null = null;
  deliveriesInFlight: () => number = () => 0;
  readonly catalogs: CatalogSwitch;
  private catalog: QrvendConfig['catalog'];
  private builders: RequestBuilders;
  private boardFirmware: string | null = null;
  // Messages from the machine loop can arrive before start-up finishes: kept in order.
  private readonly early: FlowMessage[] = [];
  private readonly earlyAudits: Extract<MainToPayment, { type: 'dex.audit' }>[] = [];
  private running: Running | null = null;
  private stopping = false;
  private shutdownAsked = false;
  /** Set when start-up failed: a shutdown is answered at once (nothing to close). */
  private startFailed = false;

  constructor(
    readonly data: PaymentWorkerData,
    private readonly port: MainPort,
  ) {
    this.config = data.config;
    this.log = createLogger({ level: this.config.log.level, name: 'payment', sync: true, file: data.logFile });
    this.catalog = this.config.catalog;
    this.builders = this.makeBuilders();
    this.catalogs = new CatalogSwitch({
      config: this.config,
      machineId: data.machineId,
      log: this.log,
      busy: () => (this.service === null ? 'the payment worker is starting' : this.service.catalogBusy()),
      use: (catalog, staticAgeLimit) => {
        this.catalog = catalog;
        this.builders = this.makeBuilders();
        this.service?.useStaticAgeLimit(staticAgeLimit);
      },
      toMain: (message) => this.toMain(message),
      toDisplay: (message) => this.data.displayPort?.postMessage(message),
      applied: (version) => this.fleet?.catalogApplied(version),
    });
  }

  /** Listens to the main thread, then starts up; a failed start-up is reported as `fatal`. */
  start(): void {
    this.port.on('message', (message) => this.route(message));
    this.run().catch((err: unknown) => this.failed(err));
  }

  toMain(message: PaymentToMain): void {
    if (message.type !== 'health') this.collector.touch();
    this.port.postMessage(message);
  }

  show(screen: Screen): void {
    this.data.displayPort?.postMessage({ type: 'show', screen } satisfies ToDisplay);
  }

  /** The request builders of the board's current firmware (board.info may change it) and the current catalog. */
  currentBuilders(): RequestBuilders {
    return this.builders;
  }

  currentCatalog(): QrvendConfig['catalog'] {
    return this.catalog;
  }

  /** Every message of the main thread, routed once; a kind left out does not compile. */
  private route(message: MainToPayment): void {
    this.collector.touch();
    switch (message.type) {
      case 'dex.audit':
        if (this.dex === null) this.earlyAudits.push(message);
        else this.dex.handle(message);
        return;
      case 'reader.status':
        this.lastReader = message;
        this.fleet?.fromMain(message);
        this.toFlows(message);
        return;
      case 'fleet.observe':
      case 'update.event':
        this.fleet?.fromMain(message);
        return;
      case 'update.hold':
        this.answerHold(message.hold);
        return;
      case 'board.info':
        this.boardFirmware = message.firmware;
        this.builders = this.makeBuilders();
        return;
      case 'shutdown':
        this.shutdownAsked = true;
        if (this.startFailed) this.toMain({ type: 'stopped' });
        else if (this.running !== null) void this.shutdown();
        this.toFlows(message);
        return;
      case 'vend.requested':
      case 'vend.result':
      case 'vend.request.ended':
      case 'session.started':
      case 'session.refused':
      case 'vend.approved':
      case 'vend.denied':
      case 'session.ended':
      case 'cash.sale':
        this.toFlows(message);
        return;
      default: {
        const unknownKind: never = message;
        this.log.error({ message: unknownKind }, 'the main thread sent a message of an unknown kind');
      }
    }
  }

  private answerHold(hold: boolean): void {
    // Before the flows are up nothing is in flight, but nothing can be held either: not yet.
    if (this.service === null) {
      this.toMain({ type: 'update.activity', busy: 'the payment worker is starting', held: false });
      return;
    }
    const activity = this.service.holdForUpdate(hold, this.deliveriesInFlight());
    this.toMain({ type: 'update.activity', ...activity, held: hold });
  }

  private toFlows(message: FlowMessage): void {
    if (this.service === null) {
      this.early.push(message);
      return;
    }
    try {
      this.inService(message);
      const type = message.type;
      if (type === 'session.ended' || type === 'vend.result' || type === 'vend.request.ended') {
        this.collector.arm();
        this.catalogs.tryNow();
      }
    } catch (err) {
      // A flow that throws must not take the worker (and every other payment) down with it.
      const code = isQrvendError(err) ? err.code : 'INTERNAL';
      this.log.error({ err, code, type: message.type }, 'payment message handler failed');
    }
  }

  /** A message for the flows; then the journaled results the ledger now holds go back to the main thread. */
  private inService(message: FlowMessage): void {
    this.service!.handle(message);
    const { journal } = this;
    if (journal === null || message.type !== 'vend.result') return;
    journal.note(message);
    const recordedKeys = journal.settle();
    if (recordedKeys.length > 0) this.toMain({ type: 'vend.journal', recordedKeys, takenOver: journal.done });
  }

  private async run(): Promise<void> {
    // Before the flows take anything: the catalog kept from the fleet is what they sell by.
    this.catalogs.startUp();
    const stores = await openPaymentStores(this);
    const parts = await startPaymentParts(this, stores, () => {
      for (const message of this.early.splice(0)) this.inService(message);
      for (const message of this.earlyAudits.splice(0)) this.dex!.handle(message);
    });
    this.running = { stores, ...parts };
    const startUrl = parts.endpoint?.url ?? null;
    this.toMain({ type: 'ready', startUrl });
    this.log.info({ startUrl, recovered: stores.recovered }, 'payment worker ready');
    if (this.shutdownAsked) void this.shutdown();
  }

  private async shutdown(): Promise<void> {
    if (this.stopping || this.running === null) return;
    this.stopping = true;
    const { stores, drainer, endpoint, health } = this.running;
    clearInterval(health);
    this.collector.cancel();
    this.catalogs.stop();
    // Nothing will confirm them now: closed with nothing owed (recovery would send a Cancel instead).
    this.relayedStart?.dropAll('the agent stopped before the relay confirmed');
    this.fleet?.close();
    this.dex?.close();
    this.service?.stop();
    await endpoint?.close();
    await drainer.stop();
    stores.gateway.close();
    stores.ledger.close();
    this.log.info('payment worker stopped');
    this.toMain({ type: 'stopped' });
  }

  private failed(err: unknown): void {
    const code = isQrvendError(err) ? err.code : 'INTERNAL';
    this.log.fatal({ err, code }, 'payment worker failed to start');
    this.toMain({ type: 'fatal', code, message: isQrvendError(err) ? err.describe() : String(err) });
    // Nothing to close: answer a shutdown at once so the daemon does not wait for its timeout.
    this.startFailed = true;
    if (this.shutdownAsked) this.toMain({ type: 'stopped' });
  }

  private makeBuilders(): RequestBuilders {
    const { config, data } = this;
    const envelopeConfig = {
      ...config,
      catalog: this.catalog,
      machine: { ...config.machine, terminalId: data.terminalId },
    };
    const fwVersion = firmwareVersion(this.boardFirmware);
    const device = { hwSerial: data.hwSerial, fwVersion, type: config.device.type };
    return createRequestBuilders(envelopeConfig, device);
  }
}
