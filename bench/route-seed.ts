/**
 * The route's bench data, written in bulk by the database itself: 40 products, one template of 40
 * selections run by 10,000 machines, their 400,000 stock rows (levels, rates and planned values as
 * ingest and planogram writes keep them), and 50 routes of 200 machines each, in visit order.
 * Levels and sales spread by the row's number: one machine in five has a selection below its
 * threshold, others have one that empties before the next visit, as on a fleet between visits.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Dialect } from '../src/console/store/migrations.js';
import type { ConsoleDatabase } from '../src/console/store/schema.js';

export const ROUTE_SEED = { machines: 10_000, selections: 40, routes: 50, perRoute: 200 };

function series(dialect: Dialect, n: RawBuilder<unknown> | number): RawBuilder<unknown> {
  return dialect === 'sqlite'
    ? sql`with recursive s(i) as (select 0 union all select i + 1 from s where i + 1 < ${n}) select i from s`
    : sql`select generate_series(0, ${n} - 1) as i`;
}

/** `nowMs`: the moment the stock is as seeded (each cycle began one to four days before it). */
export async function seedRoute(db: Kysely<ConsoleDatabase>, dialect: Dialect, nowMs: number): Promise<void> {
  // Literals, not parameters: SQLite would take a bound number as REAL, and i / 40 would not be whole.
  const machines = sql.lit(ROUTE_SEED.machines);
  const selections = sql.lit(ROUTE_SEED.selections);
  const routes = sql.lit(ROUTE_SEED.routes);
  const perRoute = sql.lit(ROUTE_SEED.perRoute);
  const at = new Date(nowMs).toISOString();
  await sql`insert into products (code, name, names, measurement, unit, age_limit)
    select 'P' || i, 'Product ' || i, '{}', 1, 'Unit', null from (${series(dialect, selections)}) s`.execute(db);
  await sql`insert into templates (template_id, model, updated_at) values ('T40', 'Forty', ${at})`.execute(db);
  await sql`insert into template_selections
    (template_id, selection, product_code, capacity, par, threshold, price_milli)
    select 'T40', i, 'P' || i, 12, 10, 3, 1500 from (${series(dialect, selections)}) s`.execute(db);
  await sql`insert into machine_templates (machine_id, template_id)
    select 'vm-' || i, 'T40' from (${series(dialect, machines)}) s`.execute(db);
  // Row i: machine i / 40, selection i % 40; level 3-10 (1 for one row in 200), 0-3 vends over a
  // cycle of 1-4 days after a previous cycle of 3 days with 0-3.
  const now = sql`cast(${sql.lit(nowMs)} as bigint)`;
  const day = sql`cast(${sql.lit(86_400_000)} as bigint)`;
  await sql`insert into stock (machine_id, selection, level, filled_at_ms, cycle_vends, cycle_since_ms, prev_vends,
    prev_ms, asked_price_milli, asked_at, product_code, capacity, par, threshold, price_milli)
    select 'vm-' || (i / ${selections}), i % ${selections}, case when i % 200 = 7 then 1 else 3 + (i * 7) % 8 end,
      ${now} - (1 + i % 4) * ${day},
      (i * 3) % 4, ${now} - (1 + i % 4) * ${day}, (i * 5) % 4, 3 * ${day},
      case when i % 997 = 0 then 1600 else 1500 end, ${at}, 'P' || (i % ${selections}), 12, 10, 3, 1500
    from (${series(dialect, sql.lit(ROUTE_SEED.machines * ROUTE_SEED.selections))}) s`.execute(db);
  const onRoutes = series(dialect, sql.lit(ROUTE_SEED.routes * ROUTE_SEED.perRoute));
  await sql`insert into routes (route_id, weekdays)
    select 'R' || i, case when i % 2 = 0 then '1,4' else '2,5' end from (${series(dialect, routes)}) s`.execute(db);
  await sql`insert into route_machines (route_id, position, machine_id)
    select 'R' || (i / ${perRoute}), i % ${perRoute}, 'vm-' || i from (${onRoutes}) s`.execute(db);
  if (dialect === 'postgres') await sql`analyze`.execute(db);
}
