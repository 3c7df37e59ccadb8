/**
 * Routes (named groups of machines in visit order, with their visit weekdays), which machines need
 * a visit on a day, and a route's pick list (docs/console.md, "A day on the route").
 *
 * "Needs a visit" is one scan of the stock rows with their planned values (./planned-stock.ts), in
 * SQL: a selection needs a visit when its level is below its threshold, or when it sells and its
 * level is gone by the machine's next planned visit after the day: level x span / vends <= next -
 * now, where vends / span is its sales rate
 * (src/console/route/stock-math.ts: salesRatePerDay, predictedLevel, selectionNeedsVisit say the
 * same in floating point). A machine on no route is visited the next day at the latest.
 */
import { sql, type Kysely } from 'kysely';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { DAY_MS, nextVisitAfter, pickList, toBring, type PickLine, type SelectionState } from '../route/stock-math.js';
import { routeOf, selectionStates } from './route-queries.js';
import type { ConsoleDatabase } from './schema.js';

type Db = Kysely<ConsoleDatabase>;

export const ROUTE_ID = /^[A-Za-z0-9._ -]{1,64}$/;
export const MAX_ROUTE_MACHINES = 1000;

export interface RouteSummary {
  routeId: string;
  weekdays: number[];
  machines: number;
}

function weekdaysOf(text: string): number[] {
  return text === '' ? [] : text.split(',').map(Number);
}

export async function routeSummaries(db: Db): Promise<RouteSummary[]> {
  const rows = await db
    .selectFrom('routes as r')
    .select((eb) => [
      'r.route_id',
      'r.weekdays',
      eb
        .selectFrom('route_machines as m')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('m.route_id', '=', 'r.route_id')
        .as('machines'),
    ])
    .orderBy('r.route_id')
    .execute();
  return rows.map((r) => ({
    routeId: r.route_id,
    weekdays: weekdaysOf(r.weekdays),
    machines: Number(r.machines ?? 0),
  }));
}

/** Adds or replaces a route: its weekdays (0 = Sunday; none: every day) and its machines in visit order. */
export async function saveRoute(db: Db, routeId: string, weekdays: number[], machines: string[]): Promise<void> {
  if (!ROUTE_ID.test(routeId))
    throw new QrvendError(ErrorCodes.CLI_USAGE, 'a route name is 1-64 letters, digits, spaces or . _ -');
  if (weekdays.some((d) => !Number.isInteger(d) || d < 0 || d > 6))
    throw new QrvendError(ErrorCodes.CLI_USAGE, 'weekdays are 0 (Sunday) to 6 (Saturday)');
  const unique = [...new Set(machines)];
  if (unique.length > MAX_ROUTE_MACHINES)
    throw new QrvendError(ErrorCodes.CLI_USAGE, `a route has at most ${MAX_ROUTE_MACHINES} machines`);
  const days = [...new Set(weekdays)].sort().join(',');
  await db.transaction().execute(async (tx) => {
    await tx
      .insertInto('routes')
      .values({ route_id: routeId, weekdays: days })
      .onConflict((oc) => oc.column('route_id').doUpdateSet({ weekdays: days }))
      .execute();
    await tx.deleteFrom('route_machines').where('route_id', '=', routeId).execute();
    if (unique.length > 0)
      await tx
        .insertInto('route_machines')
        .values(unique.map((machine_id, position) => ({ route_id: routeId, position, machine_id })))
        .execute();
  });
}

export async function deleteRoute(db: Db, routeId: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('route_machines').where('route_id', '=', routeId).execute();
    await tx.deleteFrom('routes').where('route_id', '=', routeId).execute();
  });
}

export interface VisitNeed {
  machineId: string;
  /** Selections below their threshold now. */
  below: number;
  /** How soon its first selection at or above its threshold is empty at its rate (ms from now), or null. */
  soonestEmptyMs: number | null;
  /** Whether that is by the machine's next planned visit. */
  emptiesBeforeNext: boolean;
  nextVisitMs: number;
}

interface NeedsQuery {
  dayMs: number;
  nowMs: number;
  /** Only these machines (a route's); the fleet when absent. */
  machineIds?: readonly string[];
  limit: number;
  offset: number;
}

/** The next planned visit after `dayMs` of every route (epoch ms). */
async function horizons(db: Db, dayMs: number): Promise<{ routeId: string; nextMs: number }[]> {
  const routes = await db.selectFrom('routes').selectAll().execute();
  return routes.map((r) => ({ routeId: r.route_id, nextMs: nextVisitAfter(dayMs, weekdaysOf(r.weekdays)) }));
}

/**
 * Each machine summed up in one pass over its stock rows (no join: the scan is what 10,000 x 40
 * costs), then the few thousand machine rows joined to their next planned visit. A selection at or
 * above its threshold is empty in level x span / vends ms at its rate.
 */
function needsSql(o: NeedsQuery, routes: { routeId: string; nextMs: number }[]) {
  const now = o.nowMs;
  const fallback = o.dayMs + DAY_MS;
  const elapsed = sql`(case when ${now} > cycle_since_ms then ${now} - cycle_since_ms else 0 end)`;
  const span = sql`(case when prev_ms + ${elapsed} > ${DAY_MS} then prev_ms + ${elapsed} else ${DAY_MS} end)`;
  const horizonRows =
    routes.length === 0
      ? sql`select cast('' as text) as route_id, cast(0 as bigint) as next_ms where 1 = 0`
      : sql`values ${sql.join(routes.map((r) => sql`(cast(${r.routeId} as text), cast(${r.nextMs} as bigint))`))}`;
  const only = (column: string) =>
    o.machineIds === undefined
      ? sql``
      : sql`and ${sql.ref(column)} in (${sql.join(o.machineIds.length === 0 ? [''] : o.machineIds)})`;
  const next = sql`coalesce(n.next_ms, ${fallback})`;
  return sql<{ machine_id: string; below: number; empty_ms: number | null; next_ms: number; total: number }>`
    with horizon (route_id, next_ms) as (${horizonRows}),
    planned_next as (
      select rm.machine_id, min(h.next_ms) as next_ms
      from route_machines rm join horizon h on h.route_id = rm.route_id where 1 = 1 ${only('rm.machine_id')}
      group by rm.machine_id
    ),
    agg as (
      select machine_id,
        sum(case when level < threshold then 1 else 0 end) as below,
        min(case when level >= threshold and prev_vends + cycle_vends > 0
          then cast(level * ${span} as double precision) / (prev_vends + cycle_vends) end) as empty_ms
      from stock where product_code is not null ${only('machine_id')}
      group by machine_id
    )
    select a.machine_id, a.below, a.empty_ms, ${next} as next_ms, count(*) over () as total
    from agg a left join planned_next n on n.machine_id = a.machine_id
    where a.below > 0 or a.empty_ms <= (case when ${next} > ${now} then ${next} - ${now} else 0 end)
    order by a.machine_id limit ${o.limit} offset ${o.offset}`;
}

/**
 * The machines that need a visit on the day starting at `dayMs` (a UTC midnight), asked at
 * `nowMs`: of the fleet or of the machines given; a page of them in machine order, and how many.
 */
export async function machinesNeedingVisit(db: Db, o: NeedsQuery): Promise<{ rows: VisitNeed[]; total: number }> {
  const { rows } = await needsSql(o, await horizons(db, o.dayMs)).execute(db);
  const total =
    rows.length > 0
      ? Number(rows[0]!.total)
      : o.offset === 0
        ? 0
        : (await machinesNeedingVisit(db, { ...o, offset: 0, limit: 1 })).total;
  return {
    rows: rows.map((r) => {
      const nextVisitMs = Number(r.next_ms);
      const soonestEmptyMs = r.empty_ms === null ? null : Number(r.empty_ms);
      const ahead = Math.max(0, nextVisitMs - o.nowMs);
      return {
        machineId: r.machine_id,
        below: Number(r.below),
        soonestEmptyMs,
        emptiesBeforeNext: soonestEmptyMs !== null && soonestEmptyMs <= ahead,
        nextVisitMs,
      };
    }),
    total,
  };
}

export interface MachineToVisit {
  machineId: string;
  /** Per selection: what it holds now, what it is predicted to hold at the visit, what to bring. */
  selections: (SelectionState & { bring: number })[];
}

export interface RouteDay {
  routeId: string;
  weekdays: number[];
  dayMs: number;
  visitMs: number;
  nextVisitMs: number;
  /** Every machine of the route in visit order, whether it needs a visit, its selections. */
  machines: (MachineToVisit & { needs: VisitNeed | null })[];
  /** Per product, over the machines that need a visit. */
  pick: PickLine[];
}

/**
 * A route on a day: its machines in order, which need a visit, what each selection takes, and the
 * pick list over the machines to visit. The visit is at the day's start, or now when that passed.
 */
export async function routeDay(db: Db, routeId: string, dayMs: number, nowMs: number): Promise<RouteDay | null> {
  const route = await routeOf(db, routeId);
  if (route === null) return null;
  const visitMs = Math.max(nowMs, dayMs);
  const [states, needs] = await Promise.all([
    selectionStates(db, route.machines, nowMs),
    machinesNeedingVisit(db, { dayMs, nowMs, machineIds: route.machines, limit: MAX_ROUTE_MACHINES, offset: 0 }),
  ]);
  const needBy = new Map(needs.rows.map((n) => [n.machineId, n]));
  const byMachine = new Map<string, (SelectionState & { bring: number })[]>();
  for (const s of states) {
    const list = byMachine.get(s.machineId) ?? [];
    list.push({ ...s, bring: toBring(s, nowMs, visitMs) });
    byMachine.set(s.machineId, list);
  }
  const machines = route.machines.map((machineId) => ({
    machineId,
    needs: needBy.get(machineId) ?? null,
    selections: byMachine.get(machineId) ?? [],
  }));
  const toVisit = states.filter((s) => needBy.has(s.machineId));
  return {
    routeId,
    weekdays: route.weekdays,
    dayMs,
    visitMs,
    nextVisitMs: nextVisitAfter(dayMs, route.weekdays),
    machines,
    pick: pickList(toVisit, nowMs, visitMs),
  };
}
