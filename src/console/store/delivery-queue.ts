/**
 * The delivery queue (docs/console.md "Deliveries"): every e-mail and webhook the console sends is
 * a row here first, written in the same transaction as what caused it, then claimed by one
 * instance for a lease (`claim_until_ms`) and tried. On PostgreSQL the claim takes its rows with
 * `FOR UPDATE SKIP LOCKED`, so instances claiming at once take different rows without waiting for
 * each other; a claimed row is not due for anyone else until its lease runs out (an instance
 * killed mid-attempt: another tries it after the lease, with the same id). An attempt's outcome is
 * written only under the claim that made it (its token), so a late answer from an instance whose
 * lease ran out changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ConsoleDatabase } from './schema.js';
import type { DeliveriesTable } from './reach-schema.js';

type Db = Kysely<ConsoleDatabase> | Transaction<ConsoleDatabase>;

export type Delivery = DeliveriesTable;

export type NewDelivery = Pick<DeliveriesTable, 'id' | 'channel' | 'kind' | 'payload'> &
  Partial<
    Pick<DeliveriesTable, 'endpoint_id' | 'recipient' | 'owner' | 'rule_id' | 'machine_id' | 'feed_from' | 'feed_to'>
  >;

export async function enqueue(db: Db, d: NewDelivery, nowMs: number): Promise<void> {
  await db
    .insertInto('deliveries')
    .values({
      endpoint_id: null,
      recipient: null,
      owner: null,
      rule_id: null,
      machine_id: null,
      feed_from: null,
      feed_to: null,
      ...d,
      created_ms: nowMs,
      state: 'pending',
      attempts: 0,
      next_ms: nowMs,
    })
    .execute();
}

export interface Claim {
  token: string;
  deliveries: Delivery[];
}

/**
 * Claims up to `limit` due deliveries for `leaseMs`: pending, due, not under another live claim,
 * and (for a webhook) to an endpoint that is enabled.
 */
export async function claimDue(
  db: Kysely<ConsoleDatabase>,
  dialect: 'sqlite' | 'postgres',
  nowMs: number,
  limit: number,
  leaseMs: number,
): Promise<Claim> {
  const token = randomBytes(12).toString('base64url');
  let due = db
    .selectFrom('deliveries as d')
    .select('d.id')
    .where('d.state', '=', 'pending')
    .where('d.next_ms', '<=', nowMs)
    .where((eb) => eb.or([eb('d.claim_until_ms', 'is', null), eb('d.claim_until_ms', '<', nowMs)]))
    .where((eb) =>
      eb.or([
        eb('d.endpoint_id', 'is', null),
        eb.exists(
          eb
            .selectFrom('webhook_endpoints as e')
            .select('e.id')
            .whereRef('e.id', '=', 'd.endpoint_id')
            .where('e.enabled', '=', 1),
        ),
      ]),
    )
    .orderBy('d.next_ms')
    .limit(limit);
  if (dialect === 'postgres') due = due.forUpdate().skipLocked();
  const deliveries = await db
    .updateTable('deliveries')
    .set({ claim_token: token, claim_until_ms: nowMs + leaseMs })
    .where('id', 'in', due)
    .returningAll()
    .execute();
  return { token, deliveries: deliveries.map(numbersOf) };
}

/** bigint columns as numbers (PostgreSQL's driver is set to give them so; SQLite gives numbers). */
function numbersOf(d: Delivery): Delivery {
  const n = (v: number | null) => (v === null ? null : Number(v));
  return {
    ...d,
    endpoint_id: n(d.endpoint_id),
    rule_id: n(d.rule_id),
    feed_from: n(d.feed_from),
    feed_to: n(d.feed_to),
    created_ms: Number(d.created_ms),
    next_ms: Number(d.next_ms),
    claim_until_ms: n(d.claim_until_ms),
    done_ms: n(d.done_ms),
  };
}

export interface AttemptRecord {
  delivery: Delivery;
  token: string;
  instance: string;
  atMs: number;
  status: number | null;
  error: string | null;
  durationMs: number;
}

export async function logAttempt(db: Db, a: AttemptRecord): Promise<void> {
  await db
    .insertInto('delivery_attempts')
    .values({
      delivery_id: a.delivery.id,
      endpoint_id: a.delivery.endpoint_id,
      at_ms: a.atMs,
      instance: a.instance,
      status: a.status,
      error: a.error,
      duration_ms: a.durationMs,
    })
    .execute();
}

/** Marks the claimed delivery delivered; false when the claim was no longer ours (nothing changed). */
export async function markDelivered(tx: Transaction<ConsoleDatabase>, a: AttemptRecord): Promise<boolean> {
  const r = await tx
    .updateTable('deliveries')
    .set({
      state: 'delivered',
      attempts: sql`attempts + 1`,
      done_ms: a.atMs,
      claim_token: null,
      claim_until_ms: null,
      last_error: null,
    })
    .where('id', '=', a.delivery.id)
    .where('claim_token', '=', a.token)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** A failed attempt: due again at `nextMs`, or given up (`nextMs` null). False when the claim was not ours. */
export async function markFailed(
  tx: Transaction<ConsoleDatabase>,
  a: AttemptRecord,
  nextMs: number | null,
): Promise<boolean> {
  const r = await tx
    .updateTable('deliveries')
    .set({
      state: nextMs === null ? 'failed' : 'pending',
      attempts: sql`attempts + 1`,
      next_ms: nextMs ?? a.atMs,
      done_ms: nextMs === null ? a.atMs : null,
      claim_token: null,
      claim_until_ms: null,
      last_error: (a.error ?? '').slice(0, 512),
    })
    .where('id', '=', a.delivery.id)
    .where('claim_token', '=', a.token)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Lets go of a claim without an attempt (the endpoint was disabled meanwhile, the instance stops). */
export async function release(db: Db, id: string, token: string): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({ claim_token: null, claim_until_ms: null })
    .where('id', '=', id)
    .where('claim_token', '=', token)
    .execute();
}

/** Delivered and given-up rows older than `beforeMs`, and their attempts, removed (the log keeps a window). */
export async function pruneDeliveries(db: Kysely<ConsoleDatabase>, beforeMs: number): Promise<void> {
  const old = db.selectFrom('deliveries').select('id').where('state', '!=', 'pending').where('done_ms', '<', beforeMs);
  await db.deleteFrom('delivery_attempts').where('delivery_id', 'in', old).execute();
  await db.deleteFrom('deliveries').where('state', '!=', 'pending').where('done_ms', '<', beforeMs).execute();
}
