/**
 * The console's bench data, written in bulk by the database itself (no ingest): 10,000 machines
 * for the overview, and a year of a fleet's sales for the sales page: 1,000 machines x 365 days
 * x 3 sales = 1,095,000 sales, so 365,000 daily totals (one per machine and day, as ingest keeps
 * them). Most sales are settled; one in 53 cancelled, one in 997 dead-lettered, one in 11 cash.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Dialect } from '../src/console/store/migrations.js';
import type { ConsoleDatabase } from '../src/console/store/schema.js';

export const SEED = { machines: 10_000, sellingMachines: 1_000, days: 365, salesPerDay: 3, lastDay: '2026-11-27' };
export const SEED_SALES = SEED.sellingMachines * SEED.days * SEED.salesPerDay;

/** The first day of the seeded year. */
export const FIRST_DAY = new Date(Date.parse(SEED.lastDay) - (SEED.days - 1) * 86_400_000).toISOString().slice(0, 10);

function series(dialect: Dialect, n: number): RawBuilder<unknown> {
  return dialect === 'sqlite'
    ? sql`with recursive s(i) as (select 0 union all select i + 1 from s where i + 1 < ${n}) select i from s`
    : sql`select generate_series(0, ${n} - 1) as i`;
}

export async function seedConsole(db: Kysely<ConsoleDatabase>, dialect: Dialect): Promise<void> {
  await sql`insert into machines (machine_id, online, terminal_id, version, reader, disabled_remotely, gateway,
    outbox_pending, outbox_dead, alarms, seen_at)
    select 'vm-' || i, case when i % 10 = 0 then 0 else 1 end, 'T' || i, '1.4.0', 'enabled', 0, 'online',
    case when i % 100 = 0 then 2 else 0 end, case when i % 500 = 0 then 1 else 0 end,
    case when i % 50 = 0 then 'BOARD_SILENT' else '' end, '2026-11-28T00:00:00Z'
    from (${series(dialect, SEED.machines)}) s`.execute(db);
  // Sale i: machine i % 1000, day (i / 1000) / 3 counted from the first day.
  const n = SEED.sellingMachines;
  const dayNumber = sql`(i / ${n * SEED.salesPerDay})`;
  const day =
    dialect === 'sqlite'
      ? sql`date(${FIRST_DAY}, '+' || ${dayNumber} || ' days')`
      : sql`to_char(date ${sql.lit(FIRST_DAY)} + ${dayNumber}::int, 'YYYY-MM-DD')`;
  await sql`insert into sales (machine_id, event_id, kind, day, at, tx_id, flow, amount, amount_milli, currency,
    closing, verdict, item)
    select 'vm-' || (i % ${n}), 's-' || i, case when i % 11 = 0 then 'cash' else 'qr' end, ${day},
    ${day} || 'T12:00:00Z', 't-' || i, 'static', '1.50', 1500, 'EUR',
    case when i % 11 = 0 then null when i % 53 = 0 then 'cancel' else 'settlement' end,
    case when i % 11 = 0 then null when i % 997 = 0 then 'dead-letter' else 'accepted' end, i % 40
    from (${series(dialect, SEED_SALES)}) s`.execute(db);
  await sql`insert into daily_totals (day, machine_id, currency, paid_count, paid_milli, cash_count, cash_milli,
    cancelled_count, dead_count, dead_milli)
    select day, machine_id, currency,
      sum(case when kind = 'qr' and closing = 'settlement' and verdict <> 'dead-letter' then 1 else 0 end),
      sum(case when kind = 'qr' and closing = 'settlement' and verdict <> 'dead-letter' then amount_milli else 0 end),
      sum(case when kind = 'cash' then 1 else 0 end), sum(case when kind = 'cash' then amount_milli else 0 end),
      sum(case when kind = 'qr' and closing <> 'settlement' and verdict <> 'dead-letter' then 1 else 0 end),
      sum(case when verdict = 'dead-letter' then 1 else 0 end),
      sum(case when verdict = 'dead-letter' then amount_milli else 0 end)
    from sales where event_id like 's-%' group by day, machine_id, currency`.execute(db);
  const columns = sql.raw('paid_count, paid_milli, cash_count, cash_milli, cancelled_count, dead_count, dead_milli');
  await sql`insert into fleet_daily_totals (day, currency, ${columns})
    select day, currency, sum(paid_count), sum(paid_milli), sum(cash_count), sum(cash_milli), sum(cancelled_count),
      sum(dead_count), sum(dead_milli)
    from daily_totals where day >= ${FIRST_DAY} and day <= ${SEED.lastDay} group by day, currency`.execute(db);
  // PostgreSQL's autovacuum would gather the statistics soon after such a load; SQLite's console never does.
  if (dialect === 'postgres') await sql`analyze`.execute(db);
}
