/**
 * The event feed (docs/console.md "The event feed"): every event the console stores gets the next
 * position, in the order it was committed. The positions are taken last in the ingest
 * transaction, from one counter row: on PostgreSQL that row's lock is held to the commit, so two
 * instances' batches take their positions in the order they commit, and a reader that has seen
 * position N never sees a position below N appear later. A machine's events are in the order the
 * console stored them.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ConsoleDatabase } from './schema.js';

type Db = Kysely<ConsoleDatabase>;

/** Appends the events just stored (in the order given) to the feed; call it last in the transaction. */
export async function appendToFeed(
  tx: Transaction<ConsoleDatabase>,
  events: { machineId: string; eventId: string }[],
): Promise<void> {
  if (events.length === 0) return;
  const head = await tx
    .updateTable('feed_head')
    .set({ last: sql`last + ${events.length}` })
    .where('name', '=', 'events')
    .returning('last')
    .executeTakeFirstOrThrow();
  const first = Number(head.last) - events.length + 1;
  await tx
    .insertInto('feed')
    .values(events.map((e, i) => ({ position: first + i, machine_id: e.machineId, event_id: e.eventId })))
    .execute();
}

export interface FeedEntry {
  position: number;
  machineId: string;
  eventId: string;
  kind: string;
  at: string;
  receivedAt: string;
  /** The event as the machine sent it (JSON text). */
  payload: string;
}

/**
 * The feed after `after`, in order: at most `limit` entries and, past the first, at most
 * `maxBytes` of payload (an audit's parts are large).
 */
export async function readFeed(db: Db, after: number, limit: number, maxBytes = Infinity): Promise<FeedEntry[]> {
  const rows = await db
    .selectFrom('feed as f')
    .innerJoin('events as e', (j) =>
      j.onRef('e.machine_id', '=', 'f.machine_id').onRef('e.event_id', '=', 'f.event_id'),
    )
    .select([
      'f.position',
      'f.machine_id as machineId',
      'f.event_id as eventId',
      'e.kind',
      'e.at',
      'e.received_at as receivedAt',
      'e.payload',
    ])
    .where('f.position', '>', after)
    .orderBy('f.position')
    .limit(limit)
    .execute();
  const out: FeedEntry[] = [];
  let bytes = 0;
  for (const r of rows) {
    bytes += r.payload.length;
    if (out.length > 0 && bytes > maxBytes) break;
    out.push({ ...r, position: Number(r.position) });
  }
  return out;
}

/** The last position handed out. */
export async function feedHead(db: Db): Promise<number> {
  const row = await db.selectFrom('feed_head').select('last').where('name', '=', 'events').executeTakeFirst();
  return Number(row?.last ?? 0);
}
