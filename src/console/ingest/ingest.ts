/**
 * The console's side of the broker (docs/console.md): events through a shared subscription at
 * QoS 1 (several console instances, one group: each event goes to one of them), retained
 * statuses and health on every instance. Each message is checked against the fleet contract
 * (src/fleet/operator/decode.ts: bounded, JSON, schema, the topic's machine wins) and an event is
 * acknowledged to the broker only after its transaction committed: mqtt.js sends the PUBACK when
 * `handleMessage`'s callback is called, so the callback waits for the commit. A commit that
 * fails is never acknowledged: the connection is dropped and the persistent session hands the
 * event over again when the client is back.
 */
import type { MqttClient } from 'mqtt';
import type { IPublishPacket } from 'mqtt-packet';
import type { Kysely } from 'kysely';
import type { Logger } from '../../core/log.js';
import { connectFleet, type FleetConnectionSettings } from '../../fleet/operator/connection.js';
import { decodeFleetMessage } from '../../fleet/operator/decode.js';
import { fleetFilters } from '../../fleet/contract/index.js';
import { countRefusal, eventProblem, storeEvent, storeHealth, storeStatus } from '../store/ingest-queries.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { StoreHealth, watchBrokerLink } from './link-watch.js';

export interface IngestOptions {
  connection: FleetConnectionSettings;
  /** The shared-subscription group all instances of one console join. */
  group: string;
  /** 'shared' ($share/<group>/...), or 'plain' for a broker without shared subscriptions (one instance only). */
  subscription: 'shared' | 'plain';
  /** The persistent session's name: one per instance, stable across restarts. */
  session: string;
  reconnectMs: number;
}

export interface IngestCounters {
  stored: number;
  duplicates: number;
  statuses: number;
  health: number;
  refused: Record<string, number>;
  /** Messages whose commit failed: not acknowledged, delivered again after the reconnect. */
  failedCommits: number;
}

export type ChangeKind = 'event' | 'status';

export interface Ingest {
  counters: IngestCounters;
  client: MqttClient;
  close(): Promise<void>;
}

export function eventFilter(options: Pick<IngestOptions, 'group' | 'subscription'>, prefix: string): string {
  const events = fleetFilters(prefix).events;
  return options.subscription === 'shared' ? `$share/${options.group}/${events}` : events;
}

interface Handler {
  db: Kysely<ConsoleDatabase>;
  prefix: string;
  counters: IngestCounters;
  onChange: (kind: ChangeKind, machineId: string) => void;
}

async function refuse(
  h: Handler,
  machineId: string | null,
  reason: string,
  detail: string,
  now: string,
): Promise<void> {
  h.counters.refused[reason] = (h.counters.refused[reason] ?? 0) + 1;
  await countRefusal(h.db, machineId, reason, detail, now);
}

/** Handles one message; resolves once what it says is committed (then it may be acknowledged). */
export async function handlePacket(h: Handler, topic: string, payload: Buffer): Promise<void> {
  const now = new Date().toISOString();
  const decoded = decodeFleetMessage(h.prefix, topic, payload);
  switch (decoded.kind) {
    case 'bad':
      return refuse(h, decoded.machineId, decoded.reason, decoded.detail, now);
    case 'event': {
      const problem = eventProblem(decoded.event);
      if (problem !== null) return refuse(h, decoded.machineId, 'schema', problem, now);
      const stored = await storeEvent(h.db, decoded.machineId, decoded.event, now, payload.toString('utf8'));
      if (stored) h.counters.stored++;
      else h.counters.duplicates++;
      if (stored) h.onChange('event', decoded.machineId);
      return;
    }
    case 'status':
      await storeStatus(h.db, decoded.machineId, decoded.status, now);
      h.counters.statuses++;
      h.onChange('status', decoded.machineId);
      return;
    case 'removed':
      await storeStatus(h.db, decoded.machineId, { online: false }, now);
      h.onChange('status', decoded.machineId);
      return;
    case 'health':
      await storeHealth(h.db, decoded.machineId, decoded.health.stats, now);
      h.counters.health++;
      return;
    default:
      return;
  }
}

function takeOverAcks(client: MqttClient, h: Handler, store: StoreHealth, reconnectMs: number): void {
  client.handleMessage = (packet, callback) => {
    const publish = packet as IPublishPacket;
    const payload = Buffer.isBuffer(publish.payload) ? publish.payload : Buffer.from(publish.payload);
    // The PUBACK goes only on the connection the message came by: mqtt.js would keep one made
    // while disconnected and send it on the next connection, where its packet id may name another
    // message. After a reconnect the broker sends the message again (the eventId makes it a no-op).
    const stream = client.stream;
    handlePacket(h, publish.topic, payload).then(
      () => {
        store.committed();
        if (client.stream === stream && !stream.destroyed) callback();
      },
      (err: unknown) => {
        h.counters.failedCommits++;
        store.failed(err, reconnectMs);
        // Never acknowledged: the broker keeps it in the persistent session.
        client.stream.destroy();
      },
    );
  };
}

export async function startIngest(
  db: Kysely<ConsoleDatabase>,
  options: IngestOptions,
  log: Logger,
  onChange: (kind: ChangeKind, machineId: string) => void = () => undefined,
): Promise<Ingest> {
  const prefix = options.connection.prefix;
  const counters: IngestCounters = { stored: 0, duplicates: 0, statuses: 0, health: 0, refused: {}, failedCommits: 0 };
  const h: Handler = { db, prefix, counters, onChange };
  const store = new StoreHealth(log);
  const filters = fleetFilters(prefix);
  const subscribe = (client: MqttClient) => {
    client.subscribe(
      { [eventFilter(options, prefix)]: { qos: 1 }, [filters.status]: { qos: 1 }, [filters.health]: { qos: 0 } },
      (err) => {
        if (err) log.error({ err: err.message }, "the broker refused the console's subscriptions: check its ACL");
      },
    );
  };
  const { client } = await connectFleet(options.connection, {
    purpose: 'console',
    session: options.session,
    reconnectMs: options.reconnectMs,
    beforeConnect: (c) => takeOverAcks(c, h, store, options.reconnectMs),
  });
  subscribe(client);
  watchBrokerLink(client, options.reconnectMs, log, store);
  client.on('connect', (connack) => {
    if (!connack.sessionPresent) subscribe(client);
    // mosquitto 2.0 restores a persisted session after its restart without its shared
    // subscriptions, yet says the session is present: the events' one is made again every time.
    else if (options.subscription === 'shared') client.subscribe(eventFilter(options, prefix), { qos: 1 });
  });
  client.on('error', (err) => log.warn({ err: err.message }, 'broker connection error; reconnecting'));
  return {
    counters,
    client,
    close: () => new Promise<void>((resolve) => client.end(false, {}, () => resolve())),
  };
}
