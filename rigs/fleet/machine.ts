/**
 * A simulated machine on the fleet link, speaking the contract of docs/decisions/fleet-link.md the way the
 * daemon's fleet worker does: retained `status` with a last will, QoS 1 `events` with eventIds,
 * QoS 0 `health`, and `cmd/<name>` answered on the MQTT 5 response topic with the correlation data
 * (3.1.1: the body's `replyTo` and `correlationId`). For the operator CLI's tests and the fleet
 * simulation: no ledger, no payments.
 *
 * Commands are answered by pluggable handlers (`handlers`): `ping` is built in; the relay's
 * simulation adds `start` with a canned RelayedStartResult. A command without a handler gets
 * UNKNOWN_COMMAND, a bad body BAD_PAYLOAD, a handler that throws INTERNAL.
 */
import mqtt, { type IClientOptions, type IPublishPacket, type MqttClient } from 'mqtt';
import type { Socket } from 'node:net';
import { setNoDelayOn } from '../../src/fleet/no-delay.js';
import {
  CommandRequest,
  MAX_PAYLOAD_BYTES,
  machineTopics,
  parseTopic,
  type AlarmCode,
  type AlarmEvent,
  type CommandReply,
  type MachineTopics,
  type SaleEvent,
  type StatusMessage,
  type UpdateEvent,
} from '../../src/fleet/contract/index.js';
import type { UpdateArch } from '../../src/fleet/contract/manifest-schema.js';

type CommandErrorCode = Extract<CommandReply, { ok: false }>['error']['code'];

/** `noReply`: the machine stays silent, as one whose agent hangs or drops the command. */
export type CommandOutcome =
  { ok: true; result: unknown } | { ok: false; code: CommandErrorCode; message: string } | { noReply: true };

/**
 * `signature`: the request's signature as received (unchecked), for handlers
 * that verify it as the device's command gate does.
 */
export type CommandHandler = (
  args: unknown,
  context: { machineId: string; name: string; machine: SimulatedMachine; signature: unknown },
) => CommandOutcome | Promise<CommandOutcome>;

export interface SimulatedMachineOptions {
  url: string;
  machineId: string;
  prefix?: string;
  protocol?: 4 | 5;
  username?: string;
  password?: string;
  /** CA certificate (PEM) for an mqtts:// broker. */
  ca?: Buffer;
  /** Command handlers by name, over the built-in `ping`. */
  handlers?: Record<string, CommandHandler>;
  /** eventId of the n-th event of this machine (default `<machineId>-<n>`). */
  eventId?: (seq: number) => string;
  keepaliveS?: number;
  /** The version and architecture its status reports (default `sim`, no architecture). */
  version?: string;
  arch?: UpdateArch;
}

type OnlineStatus = Extract<StatusMessage, { online: true }>;

const BUILT_IN: Record<string, CommandHandler> = {
  ping: (_args, { machine }) => ({
    ok: true,
    result: { pong: true, machineId: machine.machineId, at: new Date().toISOString() },
  }),
};

export class SimulatedMachine {
  readonly machineId: string;
  readonly topics: MachineTopics;
  readonly client: MqttClient;
  readonly protocol: 4 | 5;
  status: OnlineStatus;
  /** Commands received (any name), replies sent. */
  commandsReceived = 0;
  repliesSent = 0;
  private seq = 0;
  private readonly prefix: string;
  private readonly handlers: Record<string, CommandHandler>;
  private readonly eventIdFor: (seq: number) => string;

  private constructor(client: MqttClient, options: SimulatedMachineOptions, topics: MachineTopics) {
    this.client = client;
    this.machineId = options.machineId;
    this.prefix = options.prefix ?? 'qrvend';
    this.topics = topics;
    this.protocol = options.protocol ?? 4;
    this.handlers = { ...BUILT_IN, ...options.handlers };
    this.eventIdFor = options.eventId ?? ((n) => `${options.machineId}-${n}`);
    const now = new Date().toISOString();
    this.status = {
      online: true,
      machineId: options.machineId,
      terminalId: options.machineId,
      uniQr: null,
      version: options.version ?? 'sim',
      ...(options.arch !== undefined ? { arch: options.arch } : {}),
      startedAt: now,
      reader: 'enabled',
      readerDisabledRemotely: false,
      gateway: 'online',
      outbox: { pending: 0, dead: 0 },
      alarms: [],
      acceptsRelayedStart: options.handlers?.start !== undefined,
      at: now,
    };
  }

  /** Connects (with the last will), subscribes to its own commands and publishes its status. */
  static async connect(options: SimulatedMachineOptions): Promise<SimulatedMachine> {
    const topics = machineTopics(options.prefix ?? 'qrvend', options.machineId);
    const clientOptions: IClientOptions = {
      protocolVersion: options.protocol ?? 4,
      clientId: `qrvend-sim-${options.machineId}`,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: 10_000,
      keepalive: options.keepaliveS ?? 60,
      will: { topic: topics.status, payload: Buffer.from(JSON.stringify({ online: false })), qos: 1, retain: true },
    };
    if (options.username !== undefined) clientOptions.username = options.username;
    if (options.password !== undefined) clientOptions.password = options.password;
    if (options.ca !== undefined) clientOptions.ca = options.ca;
    const client = await mqtt.connectAsync(options.url, clientOptions, false);
    // As the device's fleet worker should: no Nagle delay on a reply that follows a PUBACK.
    setNoDelayOn(client.stream);
    const machine = new SimulatedMachine(client, options, topics);
    client.on('message', (topic, payload, packet) => void machine.onCommand(topic, payload, packet));
    await client.subscribeAsync(topics.commandFilter, { qos: 1 });
    await machine.publishStatus();
    return machine;
  }

  async publishStatus(change: Partial<OnlineStatus> = {}): Promise<void> {
    this.status = { ...this.status, ...change, at: new Date().toISOString() };
    await this.client.publishAsync(this.topics.status, JSON.stringify(this.status), { qos: 1, retain: true });
  }

  /** A closed payment as a QoS 1 event; `publishedAt` is taken just before the publish (process.hrtime, monotonic). */
  sale(overrides: Partial<SaleEvent> = {}): { event: SaleEvent; acked: Promise<void> } {
    this.seq += 1;
    const event: SaleEvent = {
      kind: 'sale',
      eventId: this.eventIdFor(this.seq),
      at: new Date().toISOString(),
      machineId: this.machineId,
      txId: `tx-${this.machineId}-${this.seq}`,
      flow: 'static',
      amount: '1.50',
      currency: 'ILS',
      products: [{ item: 12, price: '1.50', outcome: 'vended' }],
      closing: 'settlement',
      verdict: 'accepted',
      ...overrides,
    };
    return { event, acked: this.publishEvent(event) };
  }

  /** Raises or clears an alarm: an event, and the status's alarm list. */
  async alarm(code: AlarmCode, state: 'raised' | 'cleared', detail: string | null = null): Promise<AlarmEvent> {
    this.seq += 1;
    const event: AlarmEvent = {
      kind: 'alarm',
      eventId: this.eventIdFor(this.seq),
      at: new Date().toISOString(),
      machineId: this.machineId,
      code,
      state,
      detail,
    };
    const alarms =
      state === 'raised' ? [...new Set([...this.status.alarms, code])] : this.status.alarms.filter((a) => a !== code);
    await Promise.all([this.publishEvent(event), this.publishStatus({ alarms })]);
    return event;
  }

  async health(stats: Record<string, unknown>): Promise<void> {
    await this.client.publishAsync(
      this.topics.health,
      JSON.stringify({ machineId: this.machineId, at: new Date().toISOString(), stats }),
      { qos: 0 },
    );
  }

  /** An update event (its eventId given here) with the status's `update` member following it. */
  async updateEvent(
    event: Omit<UpdateEvent, 'kind' | 'eventId' | 'at' | 'machineId' | 'running'>,
    statusChange: Partial<OnlineStatus> = {},
  ): Promise<UpdateEvent> {
    this.seq += 1;
    const at = new Date().toISOString();
    const full: UpdateEvent = {
      kind: 'update',
      eventId: this.eventIdFor(this.seq),
      at,
      machineId: this.machineId,
      running: statusChange.version ?? this.status.version,
      ...event,
    };
    await this.publishEvent(full);
    await this.publishStatus({
      update: { state: event.state, version: event.version, rolloutId: event.rolloutId, at },
      ...statusChange,
    });
    return full;
  }

  private async publishEvent(event: SaleEvent | AlarmEvent | UpdateEvent): Promise<void> {
    await this.client.publishAsync(this.topics.events, JSON.stringify(event), { qos: 1 });
  }

  /** Bytes this machine's connection has written to the broker so far. */
  bytesWritten(): number {
    return (this.client.stream as unknown as Socket | undefined)?.bytesWritten ?? 0;
  }

  private async onCommand(topic: string, payload: Buffer, packet: IPublishPacket): Promise<void> {
    const parsed = parseTopic(this.prefix, topic);
    if (parsed === null || parsed.kind !== 'command' || parsed.machineId !== this.machineId) return;
    this.commandsReceived += 1;
    const name = parsed.name;
    let request: CommandRequest | null = null;
    if (payload.byteLength <= MAX_PAYLOAD_BYTES) {
      try {
        const checked = CommandRequest.safeParse(JSON.parse(payload.toString('utf8')));
        if (checked.success) request = checked.data;
      } catch {
        request = null;
      }
    }
    const correlationData = packet.properties?.correlationData;
    const correlationId =
      correlationData !== undefined ? Buffer.from(correlationData).toString('utf8') : (request?.correlationId ?? null);
    const replyTo = packet.properties?.responseTopic ?? request?.replyTo ?? this.topics.replies;
    let outcome: CommandOutcome;
    const handler = Object.hasOwn(this.handlers, name) ? this.handlers[name] : undefined;
    if (request === null)
      outcome = { ok: false, code: 'BAD_PAYLOAD', message: 'the request is not a JSON object of the contract' };
    else if (handler === undefined)
      outcome = { ok: false, code: 'UNKNOWN_COMMAND', message: `no command "${name}" on this machine` };
    else {
      try {
        outcome = await handler(request.args, {
          machineId: this.machineId,
          name,
          machine: this,
          signature: request.signature,
        });
      } catch (err) {
        outcome = { ok: false, code: 'INTERNAL', message: (err as Error).message.slice(0, 200) };
      }
    }
    if ('noReply' in outcome) return;
    const reply: CommandReply = outcome.ok
      ? { ok: true, machineId: this.machineId, command: name.slice(0, 64), correlationId, result: outcome.result }
      : {
          ok: false,
          machineId: this.machineId,
          command: name.slice(0, 64),
          correlationId,
          error: { code: outcome.code, message: outcome.message },
        };
    const options =
      this.protocol === 5 && correlationData !== undefined
        ? { qos: 1 as const, properties: { correlationData: Buffer.from(correlationData) } }
        : { qos: 1 as const };
    try {
      await this.client.publishAsync(replyTo, JSON.stringify(reply), options);
      this.repliesSent += 1;
    } catch {
      // connection gone: the requester times out, as with a real machine
    }
  }

  /** A clean shutdown: `{online:false}` retained, then DISCONNECT (no last will). */
  async close(): Promise<void> {
    if (this.client.connected) {
      await this.client
        .publishAsync(this.topics.status, JSON.stringify({ online: false }), { qos: 1, retain: true })
        .catch(() => undefined);
    }
    await this.client.endAsync(true);
  }

  /** A power cut: the connection drops without DISCONNECT, so the broker publishes the last will. */
  crash(): void {
    (this.client.stream as unknown as Socket | undefined)?.destroy();
    this.client.end(true);
  }
}
