/**
 * Webhook endpoints and their feed (docs/console.md "Webhooks"). An endpoint that receives the
 * event feed has at most one feed delivery outstanding: the next batch is queued only once the
 * one before was delivered (`feed_queued` = `feed_cursor`), and both moves are compare-and-set on
 * the endpoint's row, so two instances never queue the same batch twice and a receiver gets the
 * feed in order, resuming from `feed_cursor`.
 */
import { type Kysely, type Transaction } from 'kysely';
import type { ConsoleDatabase } from './schema.js';
import type { WebhookEndpointsTable } from './reach-schema.js';
import { enqueue, type NewDelivery } from './delivery-queue.js';
import { feedHead } from './feed-queries.js';

type Db = Kysely<ConsoleDatabase>;
type Tx = Transaction<ConsoleDatabase>;

export interface Endpoint extends Omit<WebhookEndpointsTable, 'id'> {
  id: number;
}

function endpointOf(row: Endpoint): Endpoint {
  return { ...row, id: Number(row.id), feed_cursor: Number(row.feed_cursor), feed_queued: Number(row.feed_queued) };
}

export interface NewEndpoint {
  owner: string;
  url: string;
  secret: string;
  events: boolean;
  alerts: boolean;
  /** Where its feed starts: after the events stored so far, or from the first event the console has. */
  from: 'now' | 'beginning';
}

export async function addEndpoint(db: Db, e: NewEndpoint, nowIso: string): Promise<number> {
  const start = e.from === 'now' ? await feedHead(db) : 0;
  const row = await db
    .insertInto('webhook_endpoints')
    .values({
      owner: e.owner,
      url: e.url,
      secret: e.secret,
      events: Number(e.events),
      alerts: Number(e.alerts),
      enabled: 1,
      disabled_reason: null,
      feed_cursor: start,
      feed_queued: start,
      created_at: nowIso,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function listEndpoints(db: Db): Promise<Endpoint[]> {
  const rows = await db.selectFrom('webhook_endpoints').selectAll().orderBy('id').execute();
  return rows.map(endpointOf);
}

export async function findEndpoint(db: Db | Tx, id: number): Promise<Endpoint | null> {
  const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? null : endpointOf(row);
}

/** Disables an endpoint (its deliveries wait), saying why. */
export async function disableEndpoint(db: Db | Tx, id: number, reason: string): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ enabled: 0, disabled_reason: reason.slice(0, 512) })
    .where('id', '=', id)
    .execute();
}

/**
 * Enables an endpoint again. Its feed resumes where it stopped: a feed delivery given up is
 * pending again, with the same id and its attempts counted afresh.
 */
export async function enableEndpoint(db: Db, id: number, nowMs: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const e = await findEndpoint(tx, id);
    if (e === null) return;
    await tx.updateTable('webhook_endpoints').set({ enabled: 1, disabled_reason: null }).where('id', '=', id).execute();
    await tx
      .updateTable('deliveries')
      .set({ state: 'pending', attempts: 0, next_ms: nowMs, done_ms: null })
      .where('endpoint_id', '=', id)
      .where('kind', '=', 'events')
      .where('state', '=', 'failed')
      .where('feed_from', '=', e.feed_cursor)
      .execute();
  });
}

export async function rotateSecret(db: Db, id: number, secret: string): Promise<void> {
  await db.updateTable('webhook_endpoints').set({ secret }).where('id', '=', id).execute();
}

/** Removes an endpoint with its queue and log. */
export async function deleteEndpoint(db: Db, id: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('delivery_attempts').where('endpoint_id', '=', id).execute();
    await tx.deleteFrom('deliveries').where('endpoint_id', '=', id).execute();
    await tx.updateTable('alert_rules').set({ endpoint_id: null }).where('endpoint_id', '=', id).execute();
    await tx.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
  });
}

/** Endpoints whose feed has room for the next batch (nothing outstanding) and events after their cursor. */
export async function feedsToQueue(db: Db): Promise<Endpoint[]> {
  const head = await feedHead(db);
  const rows = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('enabled', '=', 1)
    .where('events', '=', 1)
    .whereRef('feed_queued', '=', 'feed_cursor')
    .where('feed_cursor', '<', head)
    .execute();
  return rows.map(endpointOf);
}

/** Queues the feed batch (from, to] for an endpoint, unless another instance queued one first. */
export async function queueFeedBatch(
  db: Db,
  endpointId: number,
  from: number,
  to: number,
  delivery: NewDelivery,
  nowMs: number,
): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const r = await tx
      .updateTable('webhook_endpoints')
      .set({ feed_queued: to })
      .where('id', '=', endpointId)
      .where('feed_cursor', '=', from)
      .where('feed_queued', '=', from)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return false;
    await enqueue(tx, { ...delivery, endpoint_id: endpointId, feed_from: from, feed_to: to }, nowMs);
    return true;
  });
}

/** The receiver took the batch (from, to]: its cursor moves on, so the next batch can be queued. */
export async function advanceFeed(tx: Tx, endpointId: number, from: number, to: number): Promise<void> {
  await tx
    .updateTable('webhook_endpoints')
    .set({ feed_cursor: to })
    .where('id', '=', endpointId)
    .where('feed_cursor', '=', from)
    .execute();
}

/** The endpoint's last deliveries and their attempts, newest first (the delivery log). */
export async function endpointLog(db: Db, id: number, limit = 50) {
  const deliveries = await db
    .selectFrom('deliveries')
    .select(['id', 'kind', 'state', 'attempts', 'created_ms', 'next_ms', 'last_error', 'feed_from', 'feed_to'])
    .where('endpoint_id', '=', id)
    .orderBy('created_ms', 'desc')
    .limit(limit)
    .execute();
  const attempts = await db
    .selectFrom('delivery_attempts')
    .select(['delivery_id', 'at_ms', 'instance', 'status', 'error', 'duration_ms'])
    .where('endpoint_id', '=', id)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return { deliveries, attempts };
}
