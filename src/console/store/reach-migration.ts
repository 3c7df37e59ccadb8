/**
 * Migration 0007 (docs/console.md "Alert rules", "Webhooks", "The API"): the tables of
 * ./reach-schema.ts, each stored event given its feed position in the order it was stored, the
 * machines' `online_since` (for "offline longer than"), the accounts' e-mail address, and the
 * API's index over sales.
 */
import { sql, type ColumnDefinitionBuilder, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;
type Dialect = 'sqlite' | 'postgres';

const serial = (dialect: Dialect) => (dialect === 'sqlite' ? ('integer' as const) : ('bigserial' as const));
const serialKey = (c: ColumnDefinitionBuilder, dialect: Dialect) =>
  dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey();

async function createFeed(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('feed_head')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('last', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('feed')
    .addColumn('position', 'bigint', (c) => c.primaryKey())
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .execute();
  // The events stored before the feed existed, in the order they were received.
  await sql`insert into feed (position, machine_id, event_id)
    select row_number() over (order by received_at, machine_id, event_id), machine_id, event_id from events`.execute(
    db,
  );
  await sql`insert into feed_head (name, last) select 'events', coalesce(max(position), 0) from feed`.execute(db);
}

async function createAlerts(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('alert_rules')
    .addColumn('id', serial(dialect), (c) => serialKey(c, dialect))
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('condition', 'text', (c) => c.notNull())
    .addColumn('alarm_code', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('threshold_minutes', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('machines', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('route_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('days', 'text', (c) => c.notNull())
    .addColumn('from_minute', 'integer', (c) => c.notNull())
    .addColumn('to_minute', 'integer', (c) => c.notNull())
    .addColumn('time_zone', 'text', (c) => c.notNull())
    .addColumn('hold_minutes', 'integer', (c) => c.notNull())
    .addColumn('repeat_minutes', 'integer', (c) => c.notNull())
    .addColumn('notify_cleared', 'integer', (c) => c.notNull())
    .addColumn('email', 'integer', (c) => c.notNull())
    .addColumn('endpoint_id', 'bigint')
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alert_rules_owner').on('alert_rules').columns(['owner', 'id']).execute();
  await db.schema
    .createTable('alert_states')
    .addColumn('rule_id', 'bigint', (c) => c.notNull())
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('since', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', 'text', (c) => c.notNull())
    .addColumn('told_at', 'text')
    .addColumn('last_sent_at', 'text')
    .addColumn('sent_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('cleared_at', 'text')
    .addPrimaryKeyConstraint('alert_states_pk', ['rule_id', 'machine_id'])
    .execute();
}

async function createWebhooks(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', serial(dialect), (c) => serialKey(c, dialect))
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('events', 'integer', (c) => c.notNull())
    .addColumn('alerts', 'integer', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('feed_cursor', 'bigint', (c) => c.notNull())
    .addColumn('feed_queued', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'bigint')
    .addColumn('recipient', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('owner', 'text')
    .addColumn('rule_id', 'bigint')
    .addColumn('machine_id', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('feed_from', 'bigint')
    .addColumn('feed_to', 'bigint')
    .addColumn('created_ms', 'bigint', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_ms', 'bigint', (c) => c.notNull())
    .addColumn('claim_token', 'text')
    .addColumn('claim_until_ms', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('done_ms', 'bigint')
    .execute();
  await db.schema.createIndex('deliveries_due').on('deliveries').columns(['state', 'next_ms']).execute();
  await db.schema.createIndex('deliveries_endpoint').on('deliveries').columns(['endpoint_id', 'created_ms']).execute();
  await db.schema.createIndex('deliveries_owner').on('deliveries').columns(['owner', 'created_ms']).execute();
  await db.schema
    .createTable('delivery_attempts')
    .addColumn('id', serial(dialect), (c) => serialKey(c, dialect))
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'bigint')
    .addColumn('at_ms', 'bigint', (c) => c.notNull())
    .addColumn('instance', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('delivery_attempts_endpoint')
    .on('delivery_attempts')
    .columns(['endpoint_id', 'id'])
    .execute();
  await db.schema.createIndex('delivery_attempts_delivery').on('delivery_attempts').columns(['delivery_id']).execute();
}

async function createApiTables(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('api_tokens')
    .addColumn('id', serial(dialect), (c) => serialKey(c, dialect))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema
    .createTable('api_rate')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('window_start_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('until_ms', 'bigint', (c) => c.notNull())
    .execute();
  // The API lists sales a period at a time in this order, a page found on the index alone.
  await db.schema.createIndex('sales_api').on('sales').columns(['day', 'machine_id', 'event_id']).execute();
  // One machine's sales (a machine's year is 0.1 % of a 1,000-machine fleet's): its own rows only.
  await db.schema.createIndex('sales_api_machine').on('sales').columns(['machine_id', 'day', 'event_id']).execute();
}

async function addColumns(db: AnyDb): Promise<void> {
  await db.schema.alterTable('users').addColumn('email', 'text').execute();
  await db.schema.alterTable('machines').addColumn('online_since', 'text').execute();
  await sql`update machines set online_since = coalesce(status_at, seen_at)`.execute(db);
}

export async function createReachTables(db: AnyDb, dialect: Dialect): Promise<void> {
  await createFeed(db);
  await createAlerts(db, dialect);
  await createWebhooks(db, dialect);
  await createApiTables(db, dialect);
  await addColumns(db);
}
