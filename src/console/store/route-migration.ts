/**
 * The route's tables (docs/console.md, "A day on the route"), migration 0006: products, planogram
 * templates and their selections, which template a machine runs and its per-selection overrides,
 * the stock of each selection (kept at ingest, src/console/store/stock-ingest.ts), fills, the
 * vends stock counted (for an audit's interval), audit corrections, routes and catalog pushes.
 */
import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

async function createPlanogramTables(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('products')
    .addColumn('code', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('names', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('measurement', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('unit', 'text', (c) => c.notNull().defaultTo('Unit'))
    .addColumn('age_limit', 'integer')
    .execute();
  await db.schema
    .createTable('templates')
    .addColumn('template_id', 'text', (c) => c.primaryKey())
    .addColumn('model', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('template_selections')
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('selection', 'integer', (c) => c.notNull())
    .addColumn('product_code', 'text', (c) => c.notNull())
    .addColumn('capacity', 'integer', (c) => c.notNull())
    .addColumn('par', 'integer', (c) => c.notNull())
    .addColumn('threshold', 'integer', (c) => c.notNull())
    .addColumn('price_milli', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('template_selections_pk', ['template_id', 'selection'])
    .execute();
  await db.schema
    .createTable('machine_templates')
    .addColumn('machine_id', 'text', (c) => c.primaryKey())
    .addColumn('template_id', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('selection_overrides')
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('selection', 'integer', (c) => c.notNull())
    .addColumn('product_code', 'text')
    .addColumn('capacity', 'integer')
    .addColumn('par', 'integer')
    .addColumn('threshold', 'integer')
    .addColumn('price_milli', 'bigint')
    .addPrimaryKeyConstraint('selection_overrides_pk', ['machine_id', 'selection'])
    .execute();
}

async function createStockTables(db: AnyDb, id: 'integer' | 'bigserial'): Promise<void> {
  await db.schema
    .createTable('stock')
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('selection', 'integer', (c) => c.notNull())
    .addColumn('level', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('filled_at_ms', 'bigint')
    .addColumn('cycle_vends', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('cycle_since_ms', 'bigint', (c) => c.notNull())
    .addColumn('prev_vends', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('prev_ms', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('asked_price_milli', 'bigint')
    .addColumn('asked_at', 'text')
    .addPrimaryKeyConstraint('stock_pk', ['machine_id', 'selection'])
    .execute();
  await db.schema
    .createTable('stock_vends')
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('selection', 'integer', (c) => c.notNull())
    .addColumn('at_ms', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('stock_vends_pk', ['machine_id', 'event_id', 'selection'])
    .execute();
  await db.schema.createIndex('stock_vends_at').on('stock_vends').columns(['machine_id', 'at_ms']).execute();
  await db.schema
    .createTable('stock_audits')
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('audit_id', 'text', (c) => c.notNull())
    .addColumn('selection', 'integer', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('dex_vends', 'integer', (c) => c.notNull())
    .addColumn('our_vends', 'integer', (c) => c.notNull())
    .addColumn('correction', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('stock_audits_pk', ['machine_id', 'audit_id', 'selection'])
    .execute();
  await db.schema
    .createTable('fills')
    .addColumn('id', id, (c) => (id === 'integer' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('by_user', 'text', (c) => c.notNull())
    .addColumn('counts', 'text', (c) => c.notNull())
    .addColumn('note', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.createIndex('fills_machine').on('fills').columns(['machine_id', 'at']).execute();
}

async function createRouteTables(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('routes')
    .addColumn('route_id', 'text', (c) => c.primaryKey())
    .addColumn('weekdays', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .createTable('route_machines')
    .addColumn('route_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('route_machines_pk', ['route_id', 'position'])
    .execute();
  await db.schema
    .createTable('catalog_pushes')
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('prepared_at', 'text', (c) => c.notNull())
    .addColumn('prepared_by', 'text', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('catalog_pushes_pk', ['machine_id', 'version'])
    .execute();
  // What each machine reports of its catalog (its retained status): running, waiting, last refusal.
  await sql`alter table machines add column catalog_status text`.execute(db);
}

export async function createRouteSchema(db: AnyDb, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await createPlanogramTables(db);
  await createStockTables(db, dialect === 'sqlite' ? 'integer' : 'bigserial');
  await createRouteTables(db);
}
