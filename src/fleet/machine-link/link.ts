/**
 * The machine's end of the fleet link (docs/fleet.md): it alone owns the MQTT client, so a broker
 * that hangs, resets or floods commands costs the fleet worker's time, never the machine loop's or
 * the payment worker's. It publishes the retained `status` (last will `{"online":false}`), the
 * queued events the payment worker hands it (deleted there on PUBACK), `health` at QoS 0, and
 * serves the commands on its own `cmd/+` (command-server.ts). Its ports (the MQTT client factory,
 * the clocks, the main thread and the payment worker) are handed in, so tests drive it in-process.
 */
import type { IClientOptions, MqttClient } from 'mqtt';
import type { QrvendConfig } from '../../config/schema.js';
import type { Logger } from '../../core/log.js';
import { threadMemory } from '../../core/thread-memory.js';
import { STATUS_REFRESH_MS } from '../../trust/machine-sig.js';
import { machineVoice, type MachineVoice } from './machine-voice.js';
import type {
  FleetFacts,
  FleetQueuedEvent,
  FleetToMain,
  FleetToPayment,
  MainToFleet,
  PaymentToFleet,
} from '../../ipc/messages.js';
import { machineTopics, type MachineTopics } from '../contract/topics.js';
import type { AlarmCode } from '../contract/alarms.js';
import { MAX_PAYLOAD_BYTES, type StatusMessage } from '../contract/messages.js';
import { keepNoDelay } from '../no-delay.js';
import { withoutCredentials } from '../../core/url-credentials.js';
import { boundInboundPackets } from '../packet-bound.js';
import { deviceClientOptions } from './client-options.js';
import { readFleetCredentials } from '../../config/fleet-credentials.js';
import { createProbe, probeTopic, type Probe } from './probe.js';
import type { UpdateAgent } from '../../updates/agent.js';
import { machineArch } from '../../updates/manifest.js';
import { CommandServer, loadTrust, type FleetTrust } from './command-server.js';
import { createUpdateAgent, type FleetWorkerData } from './worker-data.js';
import { CatalogReceiver } from './catalog-receiver.js';
import { catalogFile } from './catalog-store.js';
import { withinBrokerWait } from './broker-wait.js';

/** The payment worker's end of the channel between the two workers. */
export interface PaymentLinkPort {
  postMessage(message: FleetToPayment): void;
  on(event: 'message', listener: (message: PaymentToFleet) => void): void;
  close(): void;
}

export interface FleetLinkPorts {
  /** Creates the MQTT client, not yet connected (mqtt's `connect`). */
  connectMqtt(url: string, options: IClientOptions): MqttClient;
  toMain(message: FleetToMain): void;
  payment: PaymentLinkPort;
  log: Logger;
  monotonicNow(): number;
  wallNow(): number;
}

/** Events published and not yet acknowledged at once: bounds memory and the burst after an outage. */
const EVENT_WINDOW = 32;
/**
 * The reader goes session -> vend -> session at every vend: publishing each change would be a
 * retained QoS 1 message per vend per machine, for a state nobody watches at that pace. Changes
 * are coalesced to one publish per STATUS_MIN_GAP_MS, always ending on the latest facts.
 */
const STATUS_MIN_GAP_MS = 1_000;
const ARCH = machineArch();

export class FleetDeviceLink {
  private readonly fleet: QrvendConfig['fleet'];
  private readonly log: Logger;
  private readonly topics: MachineTopics;
  /** Signs what the relay believes (status, last will, replies); null: no machine key (machine-voice.ts). */
  private readonly voice: MachineVoice | null;
  private readonly trust: FleetTrust;
  private readonly commands: CommandServer;
  private readonly probe: Probe | null;
  private readonly ownProbeTopic: string;
  /** update.offer (docs/updates-on-the-machine.md): checks, downloads, verifies, tells the main thread. */
  private readonly updates: UpdateAgent | null;
  /** The signed catalog on the machine's own `catalog` topic (docs/fleet.md, "The catalog document"). */
  private readonly catalog: CatalogReceiver;
  private client: MqttClient | null = null;
  private connected = false;
  private facts: FleetFacts | null = null;
  private lastStats: Record<string, unknown> = {};
  private stopping = false;
  private readonly counters = { connects: 0, eventsPublished: 0, packetsTooLarge: 0 };
  // Events: the last sequence pulled, a pull under way, the published ones not acknowledged yet.
  private cursor = 0;
  private wanting = false;
  private readonly inflight = new Set<number>();
  private lastStatusKey = '';
  private lastStatusAt = -Infinity;
  private statusTimer: NodeJS.Timeout | null = null;
  private statusRefresh: NodeJS.Timeout | null = null;
  private healthTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly data: FleetWorkerData,
    private readonly ports: FleetLinkPorts,
  ) {
    const { config, machineId } = data;
    this.fleet = config.fleet;
    this.log = ports.log;
    this.topics = machineTopics(this.fleet.topicPrefix, machineId);
    this.voice = machineVoice(this.fleet, machineId, ports.wallNow, this.log);
    this.ownProbeTopic = probeTopic(this.fleet.topicPrefix, machineId);
    this.probe = data.probe ? this.createProbe() : null;
    this.trust = loadTrust(this.fleet);
    this.updates = createUpdateAgent(data, this.trust.keyring, {
      emit: (event) => this.toPayment({ type: 'fleet.update.event', event }),
      ready: (version, rolloutId) => ports.toMain({ type: 'update.ready', version, rolloutId }),
      statusChanged: () => this.publishStatus(false),
      log: this.log,
      wallNow: ports.wallNow,
      monotonicNow: ports.monotonicNow,
    });
    this.catalog = new CatalogReceiver({
      file: catalogFile(config),
      keyring: this.trust.keyring,
      machineId,
      base: config.catalog,
      log: this.log,
      wallNow: ports.wallNow,
      monotonicNow: ports.monotonicNow,
      toPayment: (message) => this.toPayment(message),
      changed: () => this.publishStatus(false),
    });
    this.commands = new CommandServer({
      config,
      machineId,
      topics: this.topics,
      log: this.log,
      trust: this.trust,
      voice: this.voice,
      local: {
        config,
        configFile: data.configFile,
        version: data.version,
        startedAt: data.startedAt,
        log: this.log,
        restart: (reason) => ports.toMain({ type: 'fleet.restart', reason }),
      },
      updates: () => this.updates,
      client: () => this.client,
      alarms: () => this.facts?.alarms ?? [],
      toPayment: (message) => ports.payment.postMessage(message),
      monotonicNow: ports.monotonicNow,
      wallNow: ports.wallNow,
    });
  }

  /** Listens to the payment worker, starts the timers, connects, resumes an update under way. */
  start(): void {
    this.ports.payment.on('message', (message) => this.fromPayment(message));
    // A signed status is believed for its window only: signed and published again, changed or not.
    this.statusRefresh = setInterval(() => this.publishStatus(true), STATUS_REFRESH_MS);
    this.statusRefresh.unref();
    this.healthTimer = setInterval(() => this.publishHealth(), this.fleet.healthIntervalS * 1000);
    this.healthTimer.unref();
    this.connect();
    this.updates?.resume();
  }

  /** A message of the main thread, routed once; a kind left out does not compile. */
  fromMain(message: MainToFleet): void {
    switch (message.type) {
      case 'fleet.stats':
        this.lastStats = message.stats;
        this.ports.toMain({ type: 'fleet.memory', memory: threadMemory() });
        return;
      case 'shutdown':
        void this.shutdown();
        return;
      default: {
        const unknownKind: never = message;
        this.log.error({ message: unknownKind }, 'the main thread sent a message of an unknown kind');
      }
    }
  }

  /** A message of the payment worker, routed once; a kind left out does not compile. */
  private fromPayment(message: PaymentToFleet): void {
    switch (message.type) {
      case 'fleet.events':
        this.publishEvents(message.events);
        return;
      case 'fleet.events.available':
        this.pull();
        return;
      case 'fleet.facts':
        this.facts = message.facts;
        this.publishStatus(false);
        return;
      case 'fleet.reply':
        this.commands.paymentReplied(message);
        return;
      case 'fleet.catalog.applied':
        this.catalog.applied(message.version);
        return;
      default: {
        const unknownKind: never = message;
        this.log.error({ message: unknownKind }, 'the payment worker sent a message of an unknown kind');
      }
    }
  }

  private toPayment(message: FleetToPayment): void {
    this.ports.payment.postMessage(message);
  }

  private pull(): void {
    if (!this.connected || this.wanting || this.stopping || this.inflight.size >= EVENT_WINDOW) return;
    this.wanting = true;
    this.toPayment({ type: 'fleet.events.want', afterSeq: this.cursor, max: EVENT_WINDOW - this.inflight.size });
  }

  private publishEvents(events: FleetQueuedEvent[]): void {
    this.wanting = false;
    for (const event of events) {
      this.cursor = Math.max(this.cursor, event.seq);
      if (this.inflight.has(event.seq)) continue;
      this.inflight.add(event.seq);
      this.client!.publish(this.topics.events, event.body, { qos: 1 }, (err) => {
        this.inflight.delete(event.seq);
        if (err) {
          // Not acknowledged and given up by the client: pull it again (same eventId).
          this.cursor = Math.min(this.cursor, event.seq - 1);
        } else {
          this.counters.eventsPublished += 1;
          this.toPayment({ type: 'fleet.events.acked', seqs: [event.seq] });
        }
        this.pull();
      });
    }
    if (events.length > 0) this.pull();
  }

  private statusMessage(): Extract<StatusMessage, { online: true }> | null {
    const { facts, data } = this;
    if (facts === null) return null;
    const update = this.updates?.status();
    return {
      online: true,
      machineId: data.machineId,
      terminalId: data.terminalId,
      uniQr: data.config.machine.uniQr,
      version: data.version,
      ...(ARCH !== null ? { arch: ARCH } : {}),
      startedAt: data.startedAt,
      reader: facts.reader,
      readerDisabledRemotely: facts.readerDisabledRemotely,
      gateway: facts.gateway,
      outbox: facts.outbox,
      alarms: facts.alarms as AlarmCode[],
      acceptsRelayedStart: this.fleet.acceptRelayedStart,
      ...(update ? { update } : {}),
      catalog: this.catalog.status(),
      at: new Date().toISOString(),
    };
  }

  private publishStatus(force: boolean): void {
    if (!force) {
      const wait = this.lastStatusAt + STATUS_MIN_GAP_MS - this.ports.monotonicNow();
      if (wait > 0) {
        this.statusTimer ??= setTimeout(() => {
          this.statusTimer = null;
          this.publishStatus(false);
        }, wait);
        return;
      }
    }
    const status = this.statusMessage();
    if (status === null || !this.connected) return;
    const key = JSON.stringify({ ...status, at: null });
    if (!force && key === this.lastStatusKey) return;
    this.lastStatusKey = key;
    this.lastStatusAt = this.ports.monotonicNow();
    const text = JSON.stringify(this.voice === null ? status : this.voice.status(status));
    this.client!.publish(this.topics.status, text, { qos: 1, retain: true });
  }

  private publishHealth(): void {
    this.updates?.refresh();
    if (!this.connected) return;
    const fleet = {
      ...this.counters,
      ...this.commands.counters,
      ...this.commands.dropped(),
      eventsInFlight: this.inflight.size,
      queued: this.facts?.queued ?? null,
    };
    const at = new Date().toISOString();
    const health = { machineId: this.data.machineId, at, stats: { ...this.lastStats, fleet } };
    const text = JSON.stringify(health);
    if (Buffer.byteLength(text) <= MAX_PAYLOAD_BYTES) this.client!.publish(this.topics.health, text, { qos: 0 });
  }

  private async shutdown(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.healthTimer !== null) clearInterval(this.healthTimer);
    if (this.statusRefresh !== null) clearInterval(this.statusRefresh);
    this.probe?.stop();
    this.updates?.stop();
    if (this.statusTimer !== null) clearTimeout(this.statusTimer);
    const c = this.client;
    if (c !== null && this.connected) {
      // A graceful stop says so itself; the last will covers the other kind.
      const goodbye: StatusMessage = this.voice === null ? { online: false } : this.voice.goodbye();
      const text = JSON.stringify(goodbye);
      await withinBrokerWait((done) => c.publish(this.topics.status, text, { qos: 1, retain: true }, done));
    }
    if (c !== null) await withinBrokerWait((done) => c.end(true, {}, done));
    this.ports.payment.close();
    this.ports.toMain({ type: 'stopped' });
  }

  private connect(): void {
    const { fleet, log, counters } = this;
    let options: IClientOptions;
    try {
      const base = deviceClientOptions(fleet, this.data.machineId, this.topics.status);
      options = { ...base, ...readFleetCredentials(fleet) };
      if (fleet.username !== null) options.username = fleet.username;
    } catch (err) {
      // An unreadable CA, certificate or password file: said once, named by path only; payments go on.
      const why = 'fleet link off: a TLS or password file named in fleet.* cannot be read';
      log.error({ code: 'FLEET_CREDENTIALS_UNREADABLE', err: (err as Error).message }, why);
      return;
    }
    this.logStart();
    // Connected by hand, so the inbound packet bound is on the first socket too: with MQTT 3.1.1 (no
    // Maximum Packet Size to announce) an oversized PUBLISH is cut as it streams in, never held whole.
    const c = this.ports.connectMqtt(fleet.url!, { ...options, manualConnect: true });
    this.client = c;
    boundInboundPackets(c, fleet.protocolVersion, () => void (counters.packetsTooLarge += 1));
    keepNoDelay(c);
    // Each connection its own signed last will.
    this.voice?.armWill(c, this.topics.status);
    c.on('reconnect', () => this.voice?.armWill(c, this.topics.status));
    c.connect();
    c.on('connect', () => this.onConnected(c));
    c.on('close', () => {
      if (this.connected) {
        log.warn({ event: 'fleet.disconnected' }, 'fleet link lost; reconnecting');
        this.ports.toMain({ type: 'fleet.link', connected: false });
      }
      this.connected = false;
      this.wanting = false;
    });
    c.on('error', (err) => log.warn({ err: err.message }, 'fleet link error'));
    c.on('message', (topic, payload, packet) => {
      // Not a command: the machine's own probe (probe.ts) runs nothing and gets no reply.
      if (topic === this.ownProbeTopic) return this.probe?.received(payload);
      if (topic === this.topics.catalog) return this.catalog.received(payload);
      void this.commands.onCommand(topic, payload, packet);
    });
  }

  private onConnected(c: MqttClient): void {
    this.connected = true;
    this.counters.connects += 1;
    this.log.info({ event: 'fleet.connected', connects: this.counters.connects }, 'fleet link connected');
    this.ports.toMain({ type: 'fleet.link', connected: true });
    this.toPayment({ type: 'fleet.link', connected: true });
    c.subscribe(this.topics.commandFilter, { qos: 1 }, () => this.probe?.subscribed());
    // Retained: the document waiting for this machine comes at once, also after time away.
    c.subscribe(this.topics.catalog, { qos: 1 });
    this.publishStatus(true);
    this.pull();
  }

  private logStart(): void {
    const { fleet, log } = this;
    const url = withoutCredentials(fleet.url!) ?? '(unparsable url)';
    const facts = { url, machineId: this.data.machineId, protocolVersion: fleet.protocolVersion };
    log.info({ ...facts, operatorKeys: this.trust.keyring?.byId.size ?? 0 }, 'fleet link starting');
    if (this.trust.problem !== null) {
      const why = `no operator key (${this.trust.problem}): every command that needs a signature is refused`;
      log.warn({ event: 'fleet.trust.none' }, `${why}; see docs/fleet.md "Signed commands"`);
    }
  }

  private createProbe(): Probe {
    return createProbe({
      publish: (body) => (this.connected ? this.client?.publish(this.ownProbeTopic, body, { qos: 1 }) : undefined),
      onReturned: () => {
        const why = 'own command topic round trip: a message published to it came back through the broker';
        this.log.info({ event: 'fleet.probe.returned' }, why);
        this.ports.toMain({ type: 'fleet.probe.returned' });
      },
    });
  }
}
