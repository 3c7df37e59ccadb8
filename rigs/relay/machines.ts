/**
 * Simulated machines on the fleet broker, for the relay's tests and benchmark: each one an MQTT
 * client with the device side's contract (retained `status` with a last will, `cmd/start` answered
 * on the request's reply topic with its correlation id; MQTT 5 properties or the 3.1.1 body
 * members). What a machine answers is the caller's: `answer` may run the real Start decisions
 * (src/start/relayed.ts over a real ledger and flow) or return a canned answer. With `signer`
 * (a machine's own key, the trust kit's machineSigner), status, last will and replies are signed as
 * the real agent signs them (src/fleet/machine-link/machine-voice.ts); without it the relay believes none.
 */
import { connect, type IPublishPacket, type MqttClient } from 'mqtt';
import { CommandRequest, machineTopics, type CommandReply } from '../../src/fleet/contract/index.js';
import type { RelayedStartOutcome } from '../../src/start/relayed.js';
import { setNoDelayOn } from '../../src/fleet/no-delay.js';
import type { MachineSigner } from '../../src/trust/machine-sig.js';

export interface SimMachineIdentity {
  machineId: string;
  terminalId: string;
  uniQr: string | null;
  /** Default true. */
  acceptsRelayedStart?: boolean;
}

export interface SimMachinesOptions {
  url: string;
  prefix?: string;
  /** 4 = MQTT 3.1.1 (aedes), 5 = MQTT 5. */
  protocolVersion?: 4 | 5;
  machines: readonly SimMachineIdentity[];
  answer(machineId: string, args: unknown): Promise<RelayedStartOutcome>;
  /** `cmd/start.confirm` (the relay wrote the Approved answer to the wallet in time); no reply. */
  confirm?(machineId: string, args: unknown): void;
  /** The machine's own key; absent or null: nothing is signed. */
  signer?: (machineId: string) => MachineSigner | null;
  /** Connections opened at once while starting (a fleet does not reconnect all at the same instant). */
  connectConcurrency?: number;
}

export interface SimMachines {
  /** cmd/start requests each machine received. */
  readonly received: Map<string, number>;
  /** cmd/start.confirm messages each machine received. */
  readonly confirmed: Map<string, number>;
  /** Every cmd/start body each machine received, as text (to show what crossed the broker). */
  readonly bodies: Map<string, string[]>;
  /** The machine's client goes away without a goodbye: the broker publishes its last will. */
  drop(machineId: string): Promise<void>;
  close(): Promise<void>;
}

function statusOf(m: SimMachineIdentity, signer: MachineSigner | null): string {
  const at = new Date().toISOString();
  const facts = {
    online: true,
    acceptsRelayedStart: m.acceptsRelayedStart ?? true,
    terminalId: m.terminalId,
    uniQr: m.uniQr,
  };
  return JSON.stringify({
    online: true,
    machineId: m.machineId,
    terminalId: m.terminalId,
    uniQr: m.uniQr,
    version: 'sim',
    startedAt: at,
    reader: 'enabled',
    readerDisabledRemotely: false,
    gateway: 'online',
    outbox: { pending: 0, dead: 0 },
    alarms: [],
    acceptsRelayedStart: m.acceptsRelayedStart ?? true,
    at,
    ...(signer !== null ? { machineSig: signer.status(facts, Date.now()) } : {}),
  });
}

export async function startSimMachines(options: SimMachinesOptions): Promise<SimMachines> {
  const prefix = options.prefix ?? 'qrvend';
  const protocolVersion = options.protocolVersion ?? 4;
  const clients = new Map<string, MqttClient>();
  const received = new Map<string, number>();
  const confirmed = new Map<string, number>();
  const bodies = new Map<string, string[]>();

  async function bring(m: SimMachineIdentity): Promise<void> {
    const topics = machineTopics(prefix, m.machineId);
    const signer = options.signer?.(m.machineId) ?? null;
    signer?.nextConnection();
    const will =
      signer === null ? '{"online":false}' : JSON.stringify({ online: false, machineSig: signer.will(Date.now()) });
    const client = connect(options.url, {
      clientId: `sim-${m.machineId}`.slice(0, 64),
      protocolVersion,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: 5_000,
      will: { topic: topics.status, payload: Buffer.from(will), qos: 1, retain: true },
    });
    clients.set(m.machineId, client);
    client.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => (setNoDelayOn(client.stream), resolve()));
      client.once('error', reject);
    });
    client.on('message', (topic: string, payload: Buffer, packet: IPublishPacket) => {
      if (topic === topics.command('start.confirm')) {
        confirmed.set(m.machineId, (confirmed.get(m.machineId) ?? 0) + 1);
        try {
          options.confirm?.(m.machineId, CommandRequest.parse(JSON.parse(payload.toString('utf8'))).args);
        } catch {
          // unreadable: nothing is confirmed
        }
        return;
      }
      if (topic !== topics.command('start')) return;
      received.set(m.machineId, (received.get(m.machineId) ?? 0) + 1);
      bodies.set(m.machineId, [...(bodies.get(m.machineId) ?? []).slice(-99), payload.toString('utf8')]);
      void answerStart(client, m.machineId, topics.replies, payload, packet, signer);
    });
    await client.subscribeAsync(topics.commandFilter, { qos: 1 });
    await client.publishAsync(topics.status, statusOf(m, signer), { qos: 1, retain: true });
  }

  async function answerStart(
    client: MqttClient,
    machineId: string,
    defaultReplies: string,
    payload: Buffer,
    packet: IPublishPacket,
    signer: MachineSigner | null,
  ): Promise<void> {
    let request: CommandRequest;
    try {
      request = CommandRequest.parse(JSON.parse(payload.toString('utf8')));
    } catch {
      return;
    }
    const replyTo = packet.properties?.responseTopic ?? request.replyTo ?? defaultReplies;
    const correlationId = packet.properties?.correlationData?.toString('utf8') ?? request.correlationId ?? null;
    const outcome = await options.answer(machineId, request.args);
    const reply: CommandReply = outcome.ok
      ? { ok: true, machineId, command: 'start', correlationId, result: outcome.result }
      : { ok: false, machineId, command: 'start', correlationId, error: outcome.error };
    const { machineId: _m, ...facts } = reply;
    const signed = signer === null ? reply : { ...reply, machineSig: signer.reply(facts, Date.now()) };
    const properties =
      protocolVersion === 5 && packet.properties?.correlationData
        ? { properties: { correlationData: packet.properties.correlationData } }
        : {};
    if (client.connected) client.publish(replyTo, JSON.stringify(signed), { qos: 1, ...properties });
  }

  const queue = [...options.machines];
  const workers = Array.from({ length: Math.min(options.connectConcurrency ?? 50, queue.length) }, async () => {
    for (let m = queue.shift(); m !== undefined; m = queue.shift()) await bring(m);
  });
  const closeAll = async () => {
    await Promise.all([...clients.values()].map((c) => c.endAsync(true).catch(() => {})));
    clients.clear();
  };
  try {
    await Promise.all(workers);
  } catch (err) {
    await closeAll();
    throw err;
  }

  return {
    received,
    confirmed,
    bodies,
    async drop(machineId) {
      const client = clients.get(machineId);
      if (client === undefined) return;
      clients.delete(machineId);
      // Destroying the socket (no DISCONNECT packet) makes the broker publish the last will.
      client.stream.destroy();
      await client.endAsync(true).catch(() => {});
    },
    close: closeAll,
  };
}
