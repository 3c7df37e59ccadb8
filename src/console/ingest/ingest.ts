/**
 * The console's side of the broker (docs/console.md): events through a shared subscription at
 * QoS 1 (several console instances, one group: each event goes to one of them), retained
 * statuses and health on every instance. Each message is checked against the fleet contract
 * (src/fleet/operator/decode.ts: bounded, JSON, schema, the topic's machine wins). Events are
 * committed in batches (group commit, ./batch.ts, ./commit.ts) and each is acknowledged to the
 * broker only after its batch committed. A commit that fails is never acknowledged: the
 * connection is dropped and the persistent session hands the events over again when the client
 * is back.
 */
import type { MqttClient } from 'mqtt';
import type { IPublishPacket } from 'mqtt-packet';
import type { Kysely } from 'kysely';
import type { Logger } from '../../core/log.js';
import { connectFleet, type FleetConnectionSettings } from '../../fleet/operator/connection.js';
import { fleetFilters } from '../../fleet/contract/index.js';
import { BatchCollector, DEFAULT_BATCH, type BatchLimits } from './batch.js';
import { commitBatch, type ChangeKind, type Handler, type IngestCounters, type Received } from './commit.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { StoreHealth, watchBrokerLink } from './link-watch.js';
import { RefusalLog } from './refusal-log.js';

export interface IngestOptions {
  connection: FleetConnectionSettings;
  /** The shared-subscription group all instances of one console join. */
  group: string;
  /** 'shared' ($share/<group>/...), or 'plain' for a broker without shared subscriptions (one instance only). */
  subscription: 'shared' | 'plain';
  /** The persistent session's name: one per instance, stable across restarts. */
  session: string;
  reconnectMs: number;
  /** Group commit: the most events per transaction and the longest wait (docs/console.md). */
  batch?: BatchLimits;
}

export { handlePacket, type ChangeKind, type IngestCounters } from './commit.js';

export interface Ingest {
  counters: IngestCounters;
  client: MqttClient;
  close(): Promise<void>;
}

export function eventFilter(options: Pick<IngestOptions, 'group' | 'subscription'>, prefix: string): string {
  const events = fleetFilters(prefix).events;
  return options.subscription === 'shared' ? `$share/${options.group}/${events}` : events;
}

// mqtt.js sends a PUBACK, and reads the next packet, only when handleMessage's callback is
// called; called with an error it reads on without one. The batch's PUBACKs go later, after the
// commit, and only on the connection the message came by: after a reconnect the broker sends
// the message again (the eventId makes it a no-op).
const ACK_LATER = new Error('acknowledged after the commit');

function sendPuback(client: MqttClient, messageId: number): void {
  (client as unknown as { _sendPacket(packet: object): void })._sendPacket({ cmd: 'puback', messageId });
}

function takeOverAcks(client: MqttClient, batches: BatchCollector<Received>): void {
  client.handleMessage = (packet, callback) => {
    const publish = packet as IPublishPacket;
    const payload = Buffer.isBuffer(publish.payload) ? publish.payload : Buffer.from(publish.payload);
    if (publish.qos === 0 || publish.messageId === undefined) {
      batches.add({ topic: publish.topic, payload, ack: null }, () => callback());
      return;
    }
    const { stream } = client;
    const messageId = publish.messageId;
    const ack = () => {
      if (client.stream === stream && !stream.destroyed) sendPuback(client, messageId);
    };
    batches.add({ topic: publish.topic, payload, ack }, () => callback(ACK_LATER));
  };
}

/** A batch that did not commit: one line from the store's health (not one per message), no PUBACK. */
function onFailure(client: MqttClient, store: StoreHealth, failure: unknown, reconnectMs: number): void {
  store.failed(failure, reconnectMs);
  // Never acknowledged: the broker keeps them in the persistent session.
  client.stream.destroy();
}

export async function startIngest(
  db: Kysely<ConsoleDatabase>,
  options: IngestOptions,
  log: Logger,
  onChange: (kind: ChangeKind, machineId: string) => void = () => undefined,
): Promise<Ingest> {
  const prefix = options.connection.prefix;
  const counters: IngestCounters = {
    stored: 0,
    duplicates: 0,
    statuses: 0,
    health: 0,
    refused: {},
    failedMessages: 0,
    batches: 0,
  };
  const h: Handler = { db, prefix, counters, onChange, refusals: new RefusalLog(log) };
  const store = new StoreHealth(log);
  let client: MqttClient | null = null;
  const batches = new BatchCollector<Received>(options.batch ?? DEFAULT_BATCH, async (batch) => {
    const failure = await commitBatch(h, batch).catch((err: unknown) => err);
    if (failure === null) store.committed();
    else if (client !== null) onFailure(client, store, failure, options.reconnectMs);
  });
  const filters = fleetFilters(prefix);
  const subscribe = (client: MqttClient) => {
    client.subscribe(
      { [eventFilter(options, prefix)]: { qos: 1 }, [filters.status]: { qos: 1 }, [filters.health]: { qos: 0 } },
      (err) => {
        if (err) log.error({ err: err.message }, "the broker refused the console's subscriptions: check its ACL");
      },
    );
  };
  const connected = await connectFleet(options.connection, {
    purpose: 'console',
    session: options.session,
    reconnectMs: options.reconnectMs,
    beforeConnect: (c) => {
      client = c;
      takeOverAcks(c, batches);
    },
  });
  const mqttClient = connected.client;
  client = mqttClient;
  subscribe(mqttClient);
  watchBrokerLink(mqttClient, options.reconnectMs, log, store);
  mqttClient.on('connect', (connack) => {
    if (!connack.sessionPresent) subscribe(mqttClient);
    // mosquitto 2.0 restores a persisted session after its restart without its shared
    // subscriptions, yet says the session is present: the events' one is made again every time.
    else if (options.subscription === 'shared') mqttClient.subscribe(eventFilter(options, prefix), { qos: 1 });
  });
  mqttClient.on('error', (err) => log.warn({ err: err.message }, 'broker connection error; reconnecting'));
  return {
    counters,
    client: mqttClient,
    close: async () => {
      await batches.close();
      await new Promise<void>((resolve) => mqttClient.end(false, {}, () => resolve()));
    },
  };
}
