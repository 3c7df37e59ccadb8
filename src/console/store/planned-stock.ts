/**
 * The planogram copied onto the stock rows (migration 0006b): every selection of a machine's
 * planogram (its template's, with its own values over them) has a stock row carrying its product,
 * capacity, par, threshold and intended price, so "needs a visit", the pick list and "price
 * differs" read one table, 10,000 machines x 40 selections in one scan. Written by every change
 * of a planogram, in its transaction; a selection that left the planogram keeps its level with
 * the planned values cleared. The planogram tables stay the truth (route-queries.ts planograms()).
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ConsoleDatabase } from './schema.js';

type Db = Kysely<ConsoleDatabase> | Transaction<ConsoleDatabase>;

/** Which machines to refresh: these, the machines running a template, or all. */
export type PlannedScope = { machines: readonly string[] } | { template: string } | 'all';

const CHUNK = 500;

function chunks<T>(list: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += CHUNK) out.push(list.slice(i, i + CHUNK));
  return out;
}

async function copyPlanned(db: Db, filter: (q: any) => any, nowMs: number): Promise<void> {
  const select = filter(
    db
      .selectFrom('machine_templates as m')
      .innerJoin('template_selections as t', 't.template_id', 'm.template_id')
      .leftJoin('selection_overrides as o', (j) =>
        j.onRef('o.machine_id', '=', 'm.machine_id').onRef('o.selection', '=', 't.selection'),
      )
      .select((eb) => [
        'm.machine_id',
        't.selection',
        sql<number>`0`.as('level'),
        sql<number>`0`.as('cycle_vends'),
        sql<number>`cast(${nowMs} as bigint)`.as('cycle_since_ms'),
        sql<number>`0`.as('prev_vends'),
        sql<number>`0`.as('prev_ms'),
        eb.fn.coalesce('o.product_code', 't.product_code').as('product_code'),
        eb.fn.coalesce('o.capacity', 't.capacity').as('capacity'),
        eb.fn.coalesce('o.par', 't.par').as('par'),
        eb.fn.coalesce('o.threshold', 't.threshold').as('threshold'),
        eb.fn.coalesce('o.price_milli', 't.price_milli').as('price_milli'),
      ]),
  );
  await db
    .insertInto('stock')
    .columns([
      'machine_id',
      'selection',
      'level',
      'cycle_vends',
      'cycle_since_ms',
      'prev_vends',
      'prev_ms',
      'product_code',
      'capacity',
      'par',
      'threshold',
      'price_milli',
    ])
    .expression(select)
    .onConflict((oc) =>
      oc.columns(['machine_id', 'selection']).doUpdateSet({
        product_code: sql`excluded.product_code`,
        capacity: sql`excluded.capacity`,
        par: sql`excluded.par`,
        threshold: sql`excluded.threshold`,
        price_milli: sql`excluded.price_milli`,
      }),
    )
    .execute();
}

async function clearUnplanned(db: Db, filter: (q: any) => any): Promise<void> {
  await filter(
    db
      .updateTable('stock')
      .set({ product_code: null, capacity: null, par: null, threshold: null, price_milli: null })
      .where('product_code', 'is not', null)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('machine_templates as m')
              .innerJoin('template_selections as t', 't.template_id', 'm.template_id')
              .select(sql<number>`1`.as('one'))
              .whereRef('m.machine_id', '=', 'stock.machine_id')
              .whereRef('t.selection', '=', 'stock.selection'),
          ),
        ),
      ),
  ).execute();
}

/** Copies the planograms of `scope` onto their stock rows (new selections start at level 0). */
export async function refreshPlanned(db: Db, scope: PlannedScope, nowMs: number): Promise<void> {
  if (scope === 'all') {
    // SQLite reads "INSERT ... SELECT ... JOIN ... ON CONFLICT" only with a WHERE before ON CONFLICT.
    await copyPlanned(db, (q) => q.where(sql<boolean>`1 = 1`), nowMs);
    await clearUnplanned(db, (q) => q);
    return;
  }
  if ('template' in scope) {
    const t = scope.template;
    await copyPlanned(db, (q) => q.where('m.template_id', '=', t), nowMs);
    const ofTemplate = db.selectFrom('machine_templates').select('machine_id').where('template_id', '=', t);
    await clearUnplanned(db, (q) => q.where('machine_id', 'in', ofTemplate));
    return;
  }
  for (const ids of chunks([...new Set(scope.machines)])) {
    await copyPlanned(db, (q) => q.where('m.machine_id', 'in', ids), nowMs);
    await clearUnplanned(db, (q) => q.where('machine_id', 'in', ids));
  }
}
