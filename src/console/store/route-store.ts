/**
 * Routes (named groups of machines in visit order, with their visit weekdays), which machines need
 * a visit on a day, and a route's pick list (docs/console.md, "A day on the route").
 *
 * "Needs a visit" is one scan of the stock rows with their planned values (./planned-stock.ts), in
 * SQL, on integers: a selection needs a visit when its level is below its threshold, or when it
 * sells and its level is gone by the machine's next planned visit after the day:
 * level x span <= vends x (next - now), where vends / span is its sales rate
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
  /** Selections at or above it that are predicted empty by the next planned visit. */
  emptying: number;
  nextVisitMs: number;
}

/** The next planned visit after `dayMs` of every route (epoch ms). */
async function horizons(db: Db, dayMs: number): Promise<{ routeId: string; nextMs: number }[]> {
  const routes = await db.selectFrom('routes').selectAll().execute();
  return routes.map((r) => ({ routeId: r.route_id, nextMs: nextVisitAfter(dayMs, weekdaysOf(r.weekdays)) }));
}

/**
 * The machines that need a visit on the day starting at `dayMs` (a UTC midnight), asked at
 * `nowMs`: of one route, or of the fleet; a page of them in machine order, and how many in all.
 */
export async function machinesNeedingVisit(
  db: Db,
  o: { dayMs: number; nowMs: number; routeId?: string; limit: number; offset: number },
): Promise<{ rows: VisitNeed[]; total: number }> {
  const routes = await horizons(db, o.dayMs);
  const fallback = o.dayMs + DAY_MS;
  const now = o.nowMs;
  const span = sql`(case when s.prev_ms + (case when ${now} > s.cycle_since_ms then ${now} - s.cycle_since_ms
    else 0 end) > ${DAY_MS} then s.prev_ms + (case when ${now} > s.cycle_since_ms then ${now} - s.cycle_since_ms
    else 0 end) else ${DAY_MS} end)`;
  const next = sql`coalesce(n.next_ms, ${fallback})`;
  const ahead = sql`(case when ${next} > ${now} then ${next} - ${now} else 0 end)`;
  const horizonRows =
    routes.length === 0
      ? sql`select cast('' as text) as route_id, cast(0 as bigint) as next_ms where 1 = 0`
      : sql`values ${sql.join(routes.map((r) => sql`(cast(${r.routeId} as text), cast(${r.nextMs} as bigint))`))}`;
  const onRoute =
    o.routeId === undefined
      ? sql``
      : sql`and s.machine_id in (select machine_id from route_machines where route_id = ${o.routeId})`;
  const query = sql<{ machine_id: string; below: number; emptying: number; next_ms: number; total: number }>`
    with horizon (route_id, next_ms) as (${horizonRows}),
    planned_next as (
      select rm.machine_id, min(h.next_ms) as next_ms
      from route_machines rm join horizon h on h.route_id = rm.route_id group by rm.machine_id
    ),
    needs as (
      select s.machine_id,
        sum(case when s.level < s.threshold then 1 else 0 end) as below,
        sum(case when s.level >= s.threshold and s.prev_vends + s.cycle_vends > 0
          and s.level * ${span} <= (s.prev_vends + s.cycle_vends) * ${ahead} then 1 else 0 end) as emptying,
        min(${next}) as next_ms
      from stock s left join planned_next n on n.machine_id = s.machine_id
      where s.product_code is not null ${onRoute}
      group by s.machine_id
    )
    select machine_id, below, emptying, next_ms, count(*) over () as total
    from needs where below > 0 or emptying > 0
    order by machine_id limit ${o.limit} offset ${o.offset}`;
  const { rows } = await query.execute(db);
  return {
    rows: rows.map((r) => ({
      machineId: r.machine_id,
      below: Number(r.below),
      emptying: Number(r.emptying),
      nextVisitMs: Number(r.next_ms),
    })),
    total: rows.length === 0 ? await countNeeding(db, o) : Number(rows[0]!.total),
  };
}

/** The total when the page asked for is past the end (the window function gave no row to carry it). */
async function countNeeding(
  db: Db,
  o: { dayMs: number; nowMs: number; routeId?: string; limit: number; offset: number },
): Promise<number> {
  if (o.offset === 0) return 0;
  const all = await machinesNeedingVisit(db, { ...o, offset: 0, limit: 1 });
  return all.total;
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
    machinesNeedingVisit(db, { dayMs, nowMs, routeId, limit: MAX_ROUTE_MACHINES, offset: 0 }),
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
