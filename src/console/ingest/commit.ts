/**
 * What one batch of messages does to the database, and which of them may be acknowledged
 * (docs/console.md, "Ingest"). The events go in one transaction (src/console/store/event-batch.ts);
 * statuses, health and refusals after them, each as before. A message is acknowledged only once
 * what it says is committed. When the batch's transaction fails, its events are tried one by one:
 * an event the database refuses on its own (too large for a column, a byte it cannot store) does
 * not hold back the others; it is counted as refused ('store-refused', with the database's
 * reason) and acknowledged, since sending it again would change nothing. When the database
 * itself is unavailable nothing more is acknowledged and the broker sends it all again.
 */
import type { Kysely } from 'kysely';
import type { FleetEvent } from '../../fleet/contract/index.js';
import { decodeFleetMessage, type Decoded } from '../../fleet/operator/decode.js';
import { databaseUnavailable, storeEventBatch } from '../store/event-batch.js';
import {
  countRefusal,
  eventProblem,
  storeEvent,
  storeHealth,
  storeStatus,
  type IncomingEvent,
} from '../store/ingest-queries.js';
import type { ConsoleDatabase } from '../store/schema.js';

export type ChangeKind = 'event' | 'status';

export interface IngestCounters {
  stored: number;
  duplicates: number;
  statuses: number;
  health: number;
  refused: Record<string, number>;
  /** Messages whose commit failed: not acknowledged, delivered again after the reconnect. */
  failedMessages: number;
  /** Transactions that committed a batch of events (events / batches = the mean batch). */
  batches: number;
}

export interface Handler {
  db: Kysely<ConsoleDatabase>;
  prefix: string;
  counters: IngestCounters;
  onChange: (kind: ChangeKind, machineId: string) => void;
}

/** One message as received; `ack` sends its PUBACK (null at QoS 0). */
export interface Received {
  topic: string;
  payload: Buffer;
  ack: (() => void) | null;
}

async function refuse(h: Handler, machineId: string | null, reason: string, detail: string, now: string) {
  h.counters.refused[reason] = (h.counters.refused[reason] ?? 0) + 1;
  await countRefusal(h.db, machineId, reason, detail, now);
}

function stored(h: Handler, e: IncomingEvent, isNew: boolean): void {
  if (isNew) {
    h.counters.stored++;
    h.onChange('event', e.machineId);
  } else h.counters.duplicates++;
}

/** Handles one message that is not a storable event; resolves once what it says is committed. */
async function handleOther(h: Handler, decoded: Decoded, now: string): Promise<void> {
  switch (decoded.kind) {
    case 'bad':
      return refuse(h, decoded.machineId, decoded.reason, decoded.detail, now);
    case 'event': {
      const problem = eventProblem(decoded.event);
      if (problem !== null) return refuse(h, decoded.machineId, 'schema', problem, now);
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

/** Handles one message alone (its own transaction); resolves once what it says is committed. */
export async function handlePacket(h: Handler, topic: string, payload: Buffer): Promise<void> {
  await commitBatch(h, [{ topic, payload, ack: null }]).then((failed) => {
    if (failed !== null) throw failed;
  });
}

/** A failure that is the event's own: the database would refuse it every time. */
function refusedByDatabase(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return /^(22|54)/.test(code) || /^SQLITE_(TOOBIG|MISMATCH|RANGE)/.test(code);
}

/** The batch's transaction failed: each event alone. Returns the first failure not the event's own. */
async function oneByOne(
  h: Handler,
  events: { item: Received; incoming: IncomingEvent }[],
  batchError: unknown,
): Promise<unknown> {
  if (databaseUnavailable(batchError)) return batchError;
  const failures: { item: Received; incoming: IncomingEvent; err: unknown }[] = [];
  for (const e of events) {
    const { machineId, event, receivedAt, raw } = e.incoming;
    try {
      stored(h, e.incoming, await storeEvent(h.db, machineId, event, receivedAt, raw));
      e.item.ack?.();
    } catch (err) {
      if (databaseUnavailable(err)) return err;
      failures.push({ ...e, err });
    }
  }
  const othersCommitted = failures.length < events.length;
  for (const f of failures) {
    if (!othersCommitted && !refusedByDatabase(f.err)) return f.err;
    const why = (f.err as Error).message ?? String(f.err);
    const { machineId, event, receivedAt } = f.incoming;
    await refuse(h, machineId, 'store-refused', `event ${event.eventId}: ${why}`, receivedAt);
    f.item.ack?.();
  }
  return null;
}

/**
 * Commits one batch and acknowledges what committed. Returns null, or the failure that left some
 * messages unacknowledged (their count is in failedMessages: the caller drops the connection so the
 * broker sends them again).
 */
export async function commitBatch(h: Handler, batch: Received[]): Promise<unknown> {
  const now = new Date().toISOString();
  const events: { item: Received; incoming: IncomingEvent }[] = [];
  const others: { item: Received; decoded: Decoded }[] = [];
  for (const item of batch) {
    const decoded = decodeFleetMessage(h.prefix, item.topic, item.payload);
    if (decoded.kind === 'event' && eventProblem(decoded.event) === null) {
      const event: FleetEvent = decoded.event;
      const raw = item.payload.toString('utf8');
      events.push({ item, incoming: { machineId: decoded.machineId, event, receivedAt: now, raw } });
    } else others.push({ item, decoded });
  }
  const acked = new Set<Received>();
  const ack = (item: Received) => {
    acked.add(item);
    item.ack?.();
  };
  let failure: unknown = null;
  try {
    const isNew = await storeEventBatch(
      h.db,
      events.map((e) => e.incoming),
    );
    h.counters.batches += events.length > 0 ? 1 : 0;
    events.forEach((e, i) => stored(h, e.incoming, isNew[i] === true));
    for (const e of events) ack(e.item);
  } catch (err) {
    const tracked = events.map((e) => ({ incoming: e.incoming, item: { ...e.item, ack: () => ack(e.item) } }));
    failure = await oneByOne(h, tracked, err).catch((e: unknown) => e);
  }
  for (const o of failure === null ? others : []) {
    try {
      await handleOther(h, o.decoded, now);
      ack(o.item);
    } catch (err) {
      failure = err;
      break;
    }
  }
  if (failure !== null) h.counters.failedMessages += batch.filter((item) => !acked.has(item)).length;
  return failure;
}
