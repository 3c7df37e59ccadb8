/**
 * The route's reads and writes (docs/console.md, "A day on the route"): a machine's planogram (its
 * template with its overrides over it), fills (each an event with who and when, refused whole when
 * a count is out of range), a route's selections with their levels and rates for the pick list and
 * "needs a visit", and the selections whose asked price differs from the intended one.
 */
import type { Kysely } from 'kysely';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { fillProblem, salesRatePerDay, type SelectionState } from '../route/stock-math.js';
import type { ConsoleDatabase } from './schema.js';

type Db = Kysely<ConsoleDatabase>;

export interface PlannedSelection {
  machineId: string;
  selection: number;
  productCode: string;
  capacity: number;
  par: number;
  threshold: number;
  priceMilli: number;
}

/** The planograms of `machineIds`: each template's selections with the machine's overrides over them. */
export async function planograms(db: Db, machineIds: readonly string[]): Promise<PlannedSelection[]> {
  if (machineIds.length === 0) return [];
  const rows = await db
    .selectFrom('machine_templates as m')
    .innerJoin('template_selections as t', 't.template_id', 'm.template_id')
    .leftJoin('selection_overrides as o', (j) =>
      j.onRef('o.machine_id', '=', 'm.machine_id').onRef('o.selection', '=', 't.selection'),
    )
    .select((eb) => [
      'm.machine_id',
      't.selection',
      eb.fn.coalesce('o.product_code', 't.product_code').as('product_code'),
      eb.fn.coalesce('o.capacity', 't.capacity').as('capacity'),
      eb.fn.coalesce('o.par', 't.par').as('par'),
      eb.fn.coalesce('o.threshold', 't.threshold').as('threshold'),
      eb.fn.coalesce('o.price_milli', 't.price_milli').as('price_milli'),
    ])
    .where('m.machine_id', 'in', machineIds)
    .orderBy('m.machine_id')
    .orderBy('t.selection')
    .execute();
  return rows.map((r) => ({
    machineId: r.machine_id,
    selection: Number(r.selection),
    productCode: r.product_code,
    capacity: Number(r.capacity),
    par: Number(r.par),
    threshold: Number(r.threshold),
    priceMilli: Number(r.price_milli),
  }));
}

export interface FillInput {
  machineId: string;
  /** Per selection, what is in it now; 'par': every selection filled to its par level. */
  counts: Record<string, number> | 'par';
  user: string;
  note: string;
  nowMs: number;
}

/** Records a fill (refused whole, naming each bad count) and sets the levels; returns the counts set. */
export async function recordFill(db: Db, input: FillInput): Promise<Record<string, number>> {
  const plan = await planograms(db, [input.machineId]);
  if (plan.length === 0)
    throw new QrvendError(ErrorCodes.CLI_USAGE, `${input.machineId} has no planogram: apply a template first`);
  const counts: Record<string, number> = {};
  const problems: string[] = [];
  const bySelection = new Map(plan.map((p) => [String(p.selection), p]));
  const given =
    input.counts === 'par' ? Object.fromEntries(plan.map((p) => [String(p.selection), p.par])) : input.counts;
  for (const [key, count] of Object.entries(given)) {
    const p = bySelection.get(key);
    if (p === undefined) problems.push(`selection ${key}: not in this machine's planogram`);
    else {
      const problem = fillProblem(p.selection, count, p.capacity);
      if (problem === null) counts[key] = count;
      else problems.push(problem);
    }
  }
  if (problems.length > 0) throw new QrvendError(ErrorCodes.CLI_USAGE, `the fill is refused: ${problems.join('; ')}`);
  const at = new Date(input.nowMs).toISOString();
  await db.transaction().execute(async (tx) => {
    await tx
      .insertInto('fills')
      .values({
        machine_id: input.machineId,
        at,
        by_user: input.user,
        counts: JSON.stringify(counts),
        note: input.note,
      })
      .execute();
    for (const [key, level] of Object.entries(counts)) {
      const selection = Number(key);
      const old = await tx
        .selectFrom('stock')
        .select(['cycle_vends', 'cycle_since_ms'])
        .where('machine_id', '=', input.machineId)
        .where('selection', '=', selection)
        .executeTakeFirst();
      // The cycle that ends becomes "the one before" of the sales rate.
      const prev =
        old === undefined
          ? { prev_vends: 0, prev_ms: 0 }
          : {
              prev_vends: Number(old.cycle_vends),
              prev_ms: Math.max(0, input.nowMs - Number(old.cycle_since_ms)),
            };
      const row = { level, filled_at_ms: input.nowMs, cycle_vends: 0, cycle_since_ms: input.nowMs, ...prev };
      await tx
        .insertInto('stock')
        .values({ machine_id: input.machineId, selection, ...row, asked_price_milli: null, asked_at: null })
        .onConflict((oc) => oc.columns(['machine_id', 'selection']).doUpdateSet(row))
        .execute();
    }
  });
  return counts;
}

/** The selections of `machineIds` with their levels and sales rates (SelectionState for stock-math.ts). */
export async function selectionStates(db: Db, machineIds: readonly string[], nowMs: number): Promise<SelectionState[]> {
  const plan = await planograms(db, machineIds);
  if (plan.length === 0) return [];
  const stock = await db.selectFrom('stock').selectAll().where('machine_id', 'in', machineIds).execute();
  const byKey = new Map(stock.map((s) => [`${s.machine_id}\u0000${s.selection}`, s]));
  return plan.map((p) => {
    const s = byKey.get(`${p.machineId}\u0000${p.selection}`);
    const ratePerDay =
      s === undefined
        ? 0
        : salesRatePerDay(
            {
              previousVends: Number(s.prev_vends),
              previousMs: Number(s.prev_ms),
              currentVends: Number(s.cycle_vends),
              sinceMs: Number(s.cycle_since_ms),
            },
            nowMs,
          );
    return { ...p, level: s === undefined ? 0 : Number(s.level), ratePerDay };
  });
}

/** The route's machines in visit order, and its weekdays. */
export async function routeOf(db: Db, routeId: string): Promise<{ machines: string[]; weekdays: number[] } | null> {
  const route = await db.selectFrom('routes').selectAll().where('route_id', '=', routeId).executeTakeFirst();
  if (route === undefined) return null;
  const machines = await db
    .selectFrom('route_machines')
    .select('machine_id')
    .where('route_id', '=', routeId)
    .orderBy('position')
    .execute();
  const weekdays = route.weekdays === '' ? [] : route.weekdays.split(',').map(Number);
  return { machines: machines.map((m) => m.machine_id), weekdays };
}

export interface PriceDiffers {
  machineId: string;
  selection: number;
  intendedMilli: number;
  askedMilli: number;
  askedAt: string;
}

/** Every selection whose last asked price differs from the planogram's (one machine, or the fleet). */
export async function pricesDiffering(db: Db, machineId?: string): Promise<PriceDiffers[]> {
  let q = db
    .selectFrom('stock as s')
    .innerJoin('machine_templates as m', 'm.machine_id', 's.machine_id')
    .innerJoin('template_selections as t', (j) =>
      j.onRef('t.template_id', '=', 'm.template_id').onRef('t.selection', '=', 's.selection'),
    )
    .leftJoin('selection_overrides as o', (j) =>
      j.onRef('o.machine_id', '=', 's.machine_id').onRef('o.selection', '=', 's.selection'),
    )
    .select((eb) => [
      's.machine_id',
      's.selection',
      's.asked_price_milli',
      's.asked_at',
      eb.fn.coalesce('o.price_milli', 't.price_milli').as('intended'),
    ])
    .where('s.asked_price_milli', 'is not', null);
  if (machineId !== undefined) q = q.where('s.machine_id', '=', machineId);
  const rows = await q.orderBy('s.machine_id').orderBy('s.selection').execute();
  return rows
    .filter((r) => Number(r.asked_price_milli) !== Number(r.intended))
    .map((r) => ({
      machineId: r.machine_id,
      selection: Number(r.selection),
      intendedMilli: Number(r.intended),
      askedMilli: Number(r.asked_price_milli),
      askedAt: r.asked_at ?? '',
    }));
}
