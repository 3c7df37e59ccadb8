/**
 * What one batch of messages does to the database, and which of them may be acknowledged
 * (docs/console.md, "Ingest"). The events go in one transaction (src/console/store/event-batch.ts);
 * statuses, health and refusals after them, each as before. A message is acknowledged only once
 * what it says is committed. Text the database cannot hold (U+0000, an unpaired surrogate) is
 * refused at the check, before any write, on either database. When the batch's transaction
 * fails, its events are tried one by one: a message the database refuses on its own (a data
 * error: a value out of range, a constraint) does not hold back the others; it is counted as
 * refused ('store-refused', with the database's reason), logged, and acknowledged, since sending
 * it again would change nothing; statuses and health alike. Any other failure (the database
 * unreachable, or an error that is not the data's) acknowledges nothing more: the broker sends
 * it all again.
 */
import type { Kysely } from 'kysely';
import type { FleetEvent } from '../../fleet/contract/index.js';
import { decodeFleetMessage, type Decoded } from '../../fleet/operator/decode.js';
import { databaseUnavailable, refusedByDatabase, storeEventBatch } from '../store/event-batch.js';
import {
  countRefusal,
  eventProblem,
  storeEvent,
  storeHealth,
  storeStatus,
  type IncomingEvent,
} from '../store/ingest-queries.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { unstorableText } from '../store/storable-text.js';
import type { RefusalLog } from './refusal-log.js';

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
  /** Where refusals are logged (none: counted only). */
  refusals?: RefusalLog;
}

/** One message as received; `ack` sends its PUBACK (null at QoS 0). */
export interface Received {
  topic: string;
  payload: Buffer;
  ack: (() => void) | null;
}

async function refuse(h: Handler, machineId: string | null, reason: string, detail: string, now: string) {
  h.counters.refused[reason] = (h.counters.refused[reason] ?? 0) + 1;
  h.refusals?.refused(machineId, reason, detail);
  await countRefusal(h.db, machineId, reason, detail, now).catch((err: unknown) => {
    // Its detail is escaped, so this is not expected; were it refused all the same, the message
    // is still not one to send again (it is counted and logged above).
    if (!refusedByDatabase(err)) throw err;
  });
}

const reasonOf = (err: unknown) => (err as Error)?.message ?? String(err);

/** Runs one write; a data error (the row's own) is counted as refused instead of thrown. */
async function orRefused(h: Handler, machineId: string, what: string, now: string, write: () => Promise<void>) {
  try {
    await write();
  } catch (err) {
    if (!refusedByDatabase(err)) throw err;
    await refuse(h, machineId, 'store-refused', `${what}: ${reasonOf(err)}`, now);
  }
}

/** The message as ingest takes it: text the database cannot hold is refused at the check ('schema'). */
function checked(decoded: Decoded): Decoded {
  const value =
    decoded.kind === 'event'
      ? decoded.event
      : decoded.kind === 'status'
        ? decoded.status
        : decoded.kind === 'health'
          ? decoded.health
          : null;
  const problem = value === null ? null : unstorableText(value);
  if (problem === null || decoded.kind === 'bad') return decoded;
  // The kind first (`status terminalId: holds U+0000 ...`): the log and the refusals say what was refused.
  return {
    kind: 'bad',
    machineId: decoded.machineId,
    topic: '',
    reason: 'schema',
    detail: `${decoded.kind} ${problem}`,
  };
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
      await orRefused(h, decoded.machineId, 'status', now, async () => {
        await storeStatus(h.db, decoded.machineId, decoded.status, now);
        h.counters.statuses++;
        h.onChange('status', decoded.machineId);
      });
      return;
    case 'removed':
      await storeStatus(h.db, decoded.machineId, { online: false }, now);
      h.onChange('status', decoded.machineId);
      return;
    case 'health':
      await orRefused(h, decoded.machineId, 'health', now, async () => {
        await storeHealth(h.db, decoded.machineId, decoded.health.stats, now);
        h.counters.health++;
      });
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

/** The batch's transaction failed: each event alone. Returns the first failure that is not the event's own. */
async function oneByOne(
  h: Handler,
  events: { item: Received; incoming: IncomingEvent }[],
  batchError: unknown,
): Promise<unknown> {
  if (databaseUnavailable(batchError)) return batchError;
  for (const e of events) {
    const { machineId, event, receivedAt, raw } = e.incoming;
    try {
      stored(h, e.incoming, await storeEvent(h.db, machineId, event, receivedAt, raw));
    } catch (err) {
      if (!refusedByDatabase(err)) return err;
      await refuse(h, machineId, 'store-refused', `event ${event.eventId}: ${reasonOf(err)}`, receivedAt);
    }
    e.item.ack?.();
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
    const decoded = checked(decodeFleetMessage(h.prefix, item.topic, item.payload));
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
