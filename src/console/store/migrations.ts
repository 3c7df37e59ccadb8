/**
 * Versioned migrations, run at start by Kysely's Migrator (it records what ran in its own table
 * and takes a lock, so two console instances starting on one PostgreSQL database migrate once).
 * Append new versions; never edit one that shipped.
 */
import {
  Migrator,
  sql,
  type ColumnDefinitionBuilder,
  type Kysely,
  type Migration,
  type MigrationProvider,
} from 'kysely';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { createReachTables } from './reach-migration.js';
import { addPlannedStock, createRouteSchema } from './route-migration.js';
import { refreshPlanned } from './planned-stock.js';

export type Dialect = 'sqlite' | 'postgres';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

function idColumn(dialect: Dialect) {
  return dialect === 'sqlite' ? ('integer' as const) : ('bigserial' as const);
}

function idConstraint(c: ColumnDefinitionBuilder, dialect: Dialect): ColumnDefinitionBuilder {
  return dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey();
}

async function createMachineTables(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('machines')
    .addColumn('machine_id', 'text', (c) => c.primaryKey())
    .addColumn('online', 'integer', (c) => c.notNull())
    .addColumn('terminal_id', 'text')
    .addColumn('version', 'text')
    .addColumn('reader', 'text')
    .addColumn('disabled_remotely', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('gateway', 'text')
    .addColumn('outbox_pending', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('outbox_dead', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('alarms', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('update_state', 'text')
    .addColumn('update_version', 'text')
    .addColumn('status_at', 'text')
    .addColumn('seen_at', 'text', (c) => c.notNull())
    .addColumn('last_sale_at', 'text')
    .addColumn('health_at', 'text')
    .addColumn('health', 'text')
    .execute();
  await db.schema
    .createTable('status_history')
    .addColumn('id', idColumn(dialect), (c) => idConstraint(c, dialect))
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .addColumn('online', 'integer', (c) => c.notNull())
    .addColumn('reader', 'text')
    .addColumn('gateway', 'text')
    .addColumn('outbox_pending', 'integer', (c) => c.notNull())
    .addColumn('outbox_dead', 'integer', (c) => c.notNull())
    .addColumn('version', 'text')
    .addColumn('alarms', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('status_history_machine').on('status_history').columns(['machine_id', 'id']).execute();
}

async function createEventTables(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    // Exactly once: a redelivered event (same machine, same eventId) hits this key and is a no-op.
    .addPrimaryKeyConstraint('events_pk', ['machine_id', 'event_id'])
    .execute();
  await db.schema
    .createTable('sales')
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('tx_id', 'text')
    .addColumn('flow', 'text')
    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('amount_milli', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('closing', 'text')
    .addColumn('verdict', 'text')
    .addColumn('item', 'integer')
    .addPrimaryKeyConstraint('sales_pk', ['machine_id', 'event_id'])
    .execute();
  await db.schema.createIndex('sales_day').on('sales').columns(['day', 'machine_id']).execute();
  await db.schema.createIndex('sales_machine_at').on('sales').columns(['machine_id', 'at']).execute();
  await db.schema.createIndex('sales_verdict').on('sales').columns(['verdict', 'day']).execute();
  await db.schema
    .createTable('daily_totals')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('paid_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('paid_milli', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cash_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cash_milli', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cancelled_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('dead_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('dead_milli', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('daily_totals_pk', ['day', 'machine_id', 'currency'])
    .execute();
  await db.schema.createIndex('daily_totals_machine').on('daily_totals').columns(['machine_id', 'day']).execute();
}

async function createDerivedTables(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('alarms')
    .addColumn('id', idColumn(dialect), (c) => idConstraint(c, dialect))
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('raised_at', 'text', (c) => c.notNull())
    .addColumn('raised_detail', 'text')
    .addColumn('cleared_at', 'text')
    .addColumn('cleared_detail', 'text')
    .execute();
  await db.schema.createIndex('alarms_machine').on('alarms').columns(['machine_id', 'code', 'cleared_at']).execute();
  await db.schema.createIndex('alarms_code').on('alarms').columns(['code', 'raised_at']).execute();
  await db.schema
    .createTable('audits')
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('audit_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('check_ok', 'integer')
    .addColumn('verdict', 'text', (c) => c.notNull())
    .addColumn('difference', 'integer')
    .addColumn('message', 'text')
    .addColumn('summary', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('audits_pk', ['machine_id', 'audit_id'])
    .execute();
  await db.schema.createIndex('audits_at').on('audits').columns(['at']).execute();
  await db.schema
    .createTable('updates')
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('running', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('rollout_id', 'text')
    .addColumn('detail', 'text')
    .addPrimaryKeyConstraint('updates_pk', ['machine_id', 'event_id'])
    .execute();
  await db.schema.createIndex('updates_version').on('updates').columns(['version', 'machine_id', 'at']).execute();
}

async function createAccountTables(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_name', 'text', (c) => c.notNull())
    .addColumn('csrf', 'text', (c) => c.notNull())
    .addColumn('expires_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('login_failures')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('window_start_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('refusals')
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addColumn('last_at', 'text', (c) => c.notNull())
    .addColumn('last_detail', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('refusals_pk', ['machine_id', 'reason'])
    .execute();
}

const TOTAL_COLUMNS = [
  'paid_count',
  'paid_milli',
  'cash_count',
  'cash_milli',
  'cancelled_count',
  'dead_count',
  'dead_milli',
] as const;

/**
 * The fleet's totals per day: the sales page sums a day once instead of once per machine (a
 * quarter of a 1,000-machine fleet is 91,000 rows of daily_totals). Filled from daily_totals.
 * With it, the machine-days' index in the page's order.
 */
async function createFleetDailyTotals(db: AnyDb): Promise<void> {
  let table = db.schema
    .createTable('fleet_daily_totals')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull());
  for (const column of TOTAL_COLUMNS) table = table.addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0));
  await table.addPrimaryKeyConstraint('fleet_daily_totals_pk', ['day', 'currency']).execute();
  const sums = sql.join(TOTAL_COLUMNS.map((c) => sql`sum(${sql.ref(c)})`));
  await sql`insert into fleet_daily_totals (day, currency, ${sql.join(TOTAL_COLUMNS.map((c) => sql.ref(c)))})
    select day, currency, ${sums} from daily_totals group by day, currency`.execute(db);
  // The sales page lists machine-days newest day first, machines in order: an index in that
  // order lets a page be found (OFFSET included) on the index alone, with no sort of the period.
  await sql`create index daily_totals_page on daily_totals (day desc, machine_id, currency)`.execute(db);
}

/**
 * A day's totals stay exact 64-bit integers or the sale is refused (docs/console.md, "How an event
 * is kept"). PostgreSQL's bigint refuses a sum past 2^63 - 1 itself (SQLSTATE 22003); SQLite would
 * turn it into a rounded float without a word, so a trigger refuses it there (a constraint error:
 * the event is counted as refused and acknowledged, the totals untouched).
 */
async function keepTotalsInRange(db: AnyDb, dialect: Dialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  const notInteger = sql.join(
    ['paid_milli', 'cash_milli', 'dead_milli'].map((c) => sql`typeof(new.${sql.ref(c)}) <> 'integer'`),
    sql` or `,
  );
  for (const table of ['daily_totals', 'fleet_daily_totals']) {
    for (const op of ['insert', 'update']) {
      await sql`create trigger ${sql.raw(`${table}_${op}_in_range`)} before ${sql.raw(op)} on ${sql.table(table)}
        when ${notInteger}
        begin select raise(abort, 'a day total would pass 9223372036854775807 thousandths'); end`.execute(db);
    }
  }
}

function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001-initial': {
      up: async (db) => {
        await createMachineTables(db, dialect);
        await createEventTables(db);
        await createDerivedTables(db, dialect);
        await createAccountTables(db);
      },
    },
    '0002-fleet-daily-totals': { up: createFleetDailyTotals },
    // Each account's time zone for the pages (null: the console's `timeZone`).
    '0003-account-time-zone': {
      up: async (db) => {
        await db.schema.alterTable('users').addColumn('time_zone', 'text').execute();
      },
    },
    '0003-totals-in-range': { up: (db) => keepTotalsInRange(db, dialect) },
    '0006-route': { up: (db) => createRouteSchema(db, dialect) },
    '0006b-planned-stock': {
      up: async (db) => {
        await addPlannedStock(db, dialect);
        await refreshPlanned(db, 'all', Date.now());
      },
    },
    // The event feed, alert rules, webhooks, the delivery queue and API tokens (./reach-migration.ts).
    '0007-reach': { up: (db) => createReachTables(db, dialect) },
  };
}

/** Brings the database to the newest version; refuses one written by a newer console. */
export async function migrateToLatest(db: AnyDb, dialect: Dialect): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(dialect) };
  const migrator = new Migrator({
    db,
    provider,
    migrationTableName: 'console_migrations',
    migrationLockTableName: 'console_migration_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    throw new QrvendError(
      ErrorCodes.CONSOLE_STORE_FAILED,
      `the console database could not be migrated: ${(error as Error).message ?? String(error)}`,
      {
        hint: 'a database written by a newer console cannot be opened by this one; check --db and the database server',
      },
    );
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Checks the database answers (for the health endpoint). */
export async function ping(db: AnyDb): Promise<void> {
  await sql`select 1`.execute(db);
}
