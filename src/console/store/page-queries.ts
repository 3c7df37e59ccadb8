/**
 * What the fleet overview and the machine page read. Every list is paginated (LIMIT/OFFSET on an
 * indexed order), so a fleet of 10,000 machines costs one page of rows per request.
 */
import { sql, type Kysely } from 'kysely';
import type { ConsoleDatabase, MachinesTable } from './schema.js';

type Db = Kysely<ConsoleDatabase>;

export const OVERVIEW_FILTERS = ['all', 'online', 'offline', 'out-of-order', 'alarms'] as const;
export type OverviewFilter = (typeof OVERVIEW_FILTERS)[number];

export interface OverviewQuery {
  filter: OverviewFilter;
  search: string;
  page: number;
  pageSize: number;
}

export interface FleetCounts {
  machines: number;
  online: number;
  outOfOrder: number;
  alarmed: number;
}

/** Reader states in which a machine can sell. */
const SELLING = ['enabled', 'session', 'vend'];

/** Why a machine cannot sell now, or null when it can (docs/console.md). */
export function outOfOrderReason(m: Pick<MachinesTable, 'online' | 'reader' | 'disabled_remotely'>): string | null {
  if (m.online !== 1) return 'offline (its last will)';
  if (m.disabled_remotely === 1) return 'reader disabled remotely';
  if (m.reader === null || !SELLING.includes(m.reader)) return `reader ${m.reader ?? 'unknown'}`;
  return null;
}

/** LIKE pattern for a search typed by an operator: its own % and _ are literal. */
export function likePattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function filtered(db: Db, q: Pick<OverviewQuery, 'filter' | 'search'>) {
  let query = db.selectFrom('machines');
  if (q.search !== '') {
    const pattern = likePattern(q.search);
    query = query.where((eb) =>
      eb.or([
        sql<boolean>`machine_id like ${pattern} escape '\\'`,
        sql<boolean>`terminal_id like ${pattern} escape '\\'`,
      ]),
    );
  }
  if (q.filter === 'online') query = query.where('online', '=', 1);
  if (q.filter === 'offline') query = query.where('online', '=', 0);
  if (q.filter === 'alarms') query = query.where('alarms', '!=', '');
  if (q.filter === 'out-of-order') {
    query = query.where((eb) =>
      eb.or([
        eb('online', '!=', 1),
        eb('disabled_remotely', '=', 1),
        eb('reader', 'is', null),
        eb('reader', 'not in', SELLING),
      ]),
    );
  }
  return query;
}

export async function fleetCounts(db: Db): Promise<FleetCounts> {
  const row = await db
    .selectFrom('machines')
    .select([
      sql<number>`count(*)`.as('machines'),
      sql<number>`coalesce(sum(case when online = 1 then 1 else 0 end), 0)`.as('online'),
      sql<number>`coalesce(sum(case when online != 1 or disabled_remotely = 1 or reader is null
        or reader not in ('enabled', 'session', 'vend') then 1 else 0 end), 0)`.as('outOfOrder'),
      sql<number>`coalesce(sum(case when alarms != '' then 1 else 0 end), 0)`.as('alarmed'),
    ])
    .executeTakeFirstOrThrow();
  return {
    machines: Number(row.machines),
    online: Number(row.online),
    outOfOrder: Number(row.outOfOrder),
    alarmed: Number(row.alarmed),
  };
}

export async function overview(db: Db, q: OverviewQuery): Promise<{ rows: MachinesTable[]; total: number }> {
  const total = await filtered(db, q)
    .select(sql<number>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  const rows = await filtered(db, q)
    .selectAll()
    .orderBy('machine_id')
    .limit(q.pageSize)
    .offset((q.page - 1) * q.pageSize)
    .execute();
  return { rows, total: Number(total.n) };
}

const MACHINE_PAGE_ROWS = 50;

export async function machinePage(db: Db, machineId: string) {
  const machine = await db.selectFrom('machines').selectAll().where('machine_id', '=', machineId).executeTakeFirst();
  if (machine === undefined) return null;
  const [history, sales, alarms, audits, updates] = await Promise.all([
    db
      .selectFrom('status_history')
      .selectAll()
      .where('machine_id', '=', machineId)
      .orderBy('id', 'desc')
      .limit(MACHINE_PAGE_ROWS)
      .execute(),
    db
      .selectFrom('sales')
      .selectAll()
      .where('machine_id', '=', machineId)
      .orderBy('at', 'desc')
      .limit(MACHINE_PAGE_ROWS)
      .execute(),
    db
      .selectFrom('alarms')
      .selectAll()
      .where('machine_id', '=', machineId)
      .orderBy('id', 'desc')
      .limit(MACHINE_PAGE_ROWS)
      .execute(),
    db
      .selectFrom('audits')
      .selectAll()
      .where('machine_id', '=', machineId)
      .orderBy('at', 'desc')
      .limit(MACHINE_PAGE_ROWS)
      .execute(),
    db
      .selectFrom('updates')
      .selectAll()
      .where('machine_id', '=', machineId)
      .orderBy('at', 'desc')
      .limit(MACHINE_PAGE_ROWS)
      .execute(),
  ]);
  return { machine, history, sales, alarms, audits, updates };
}
export type MachinePage = NonNullable<Awaited<ReturnType<typeof machinePage>>>;
