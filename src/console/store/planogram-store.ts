/**
 * Planograms in the database (docs/console.md, "A day on the route"): products, templates, which
 * template each machine runs and its own values over it. Every write is one transaction that also
 * copies the changed planograms onto the stock rows (./planned-stock.ts); a set (an import, a
 * template saved from its page) is written whole or not at all, after planogram-rules.ts found
 * nothing wrong with it.
 */
import type { Kysely, Transaction } from 'kysely';
import type {
  Known,
  MachinePlan,
  Override,
  PlannedValues,
  PlanogramSet,
  Product,
  Template,
} from '../route/planogram-rules.js';
import { refreshPlanned } from './planned-stock.js';
import type { ConsoleDatabase, ProductsTable } from './schema.js';

type Db = Kysely<ConsoleDatabase>;
type Tx = Transaction<ConsoleDatabase>;

function productRow(p: Product): ProductsTable {
  return {
    code: p.code,
    name: p.name,
    names: JSON.stringify(p.names),
    measurement: p.measurement,
    unit: p.unit,
    age_limit: p.ageLimit,
  };
}

export function productOf(row: ProductsTable): Product {
  let names: Product['names'] = {};
  try {
    names = JSON.parse(row.names) as Product['names'];
  } catch {
    names = {};
  }
  return {
    code: row.code,
    name: row.name,
    names,
    measurement: Number(row.measurement),
    unit: row.unit,
    ageLimit: row.age_limit === null ? null : Number(row.age_limit),
  };
}

async function putProducts(tx: Tx, products: Product[]): Promise<void> {
  for (const p of products) {
    const row = productRow(p);
    const { code: _code, ...rest } = row;
    await tx
      .insertInto('products')
      .values(row)
      .onConflict((oc) => oc.column('code').doUpdateSet(rest))
      .execute();
  }
}

async function putTemplate(tx: Tx, t: Template, nowMs: number): Promise<void> {
  const updatedAt = new Date(nowMs).toISOString();
  await tx
    .insertInto('templates')
    .values({ template_id: t.templateId, model: t.model, updated_at: updatedAt })
    .onConflict((oc) => oc.column('template_id').doUpdateSet({ model: t.model, updated_at: updatedAt }))
    .execute();
  await tx.deleteFrom('template_selections').where('template_id', '=', t.templateId).execute();
  if (t.selections.length === 0) return;
  await tx
    .insertInto('template_selections')
    .values(
      t.selections.map((s) => ({
        template_id: t.templateId,
        selection: s.selection,
        product_code: s.productCode,
        capacity: s.capacity,
        par: s.par,
        threshold: s.threshold,
        price_milli: s.priceMilli,
      })),
    )
    .execute();
}

function overrideRow(machineId: string, o: Override) {
  return {
    machine_id: machineId,
    selection: o.selection,
    product_code: o.productCode ?? null,
    capacity: o.capacity ?? null,
    par: o.par ?? null,
    threshold: o.threshold ?? null,
    price_milli: o.priceMilli ?? null,
  };
}

/** A machine runs a template; its own values are dropped when the template is another one. */
async function putMachine(tx: Tx, machineId: string, templateId: string): Promise<void> {
  const before = await tx
    .selectFrom('machine_templates')
    .select('template_id')
    .where('machine_id', '=', machineId)
    .executeTakeFirst();
  if (before?.template_id === templateId) return;
  await tx.deleteFrom('selection_overrides').where('machine_id', '=', machineId).execute();
  await tx
    .insertInto('machine_templates')
    .values({ machine_id: machineId, template_id: templateId })
    .onConflict((oc) => oc.column('machine_id').doUpdateSet({ template_id: templateId }))
    .execute();
}

async function putMachinePlan(tx: Tx, m: MachinePlan): Promise<void> {
  await putMachine(tx, m.machineId, m.templateId);
  await tx.deleteFrom('selection_overrides').where('machine_id', '=', m.machineId).execute();
  if (m.overrides.length > 0)
    await tx
      .insertInto('selection_overrides')
      .values(m.overrides.map((o) => overrideRow(m.machineId, o)))
      .execute();
}

/**
 * Writes a checked set in one transaction: its products (added or changed), its templates (each
 * replaced whole), its machines (the template each runs and, replaced whole, its own values).
 */
export async function writePlanogramSet(db: Db, set: PlanogramSet, nowMs: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await putProducts(tx, set.products);
    for (const t of set.templates) await putTemplate(tx, t, nowMs);
    for (const m of set.machines) await putMachinePlan(tx, m);
    for (const t of set.templates) await refreshPlanned(tx, { template: t.templateId }, nowMs);
    await refreshPlanned(tx, { machines: set.machines.map((m) => m.machineId) }, nowMs);
  });
}

/** Machines run the template from now on (their own values kept when it was theirs already). */
export async function applyTemplate(db: Db, templateId: string, machineIds: string[], nowMs: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    for (const id of [...new Set(machineIds)].sort()) await putMachine(tx, id, templateId);
    await refreshPlanned(tx, { machines: machineIds }, nowMs);
  });
}

/** Sets a machine's own values for one selection (`values` empty: the template's again). */
export async function setOverride(
  db: Db,
  machineId: string,
  selection: number,
  values: Partial<PlannedValues>,
  nowMs: number,
): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx
      .deleteFrom('selection_overrides')
      .where('machine_id', '=', machineId)
      .where('selection', '=', selection)
      .execute();
    if (Object.values(values).some((v) => v !== undefined))
      await tx
        .insertInto('selection_overrides')
        .values(overrideRow(machineId, { selection, ...values }))
        .execute();
    await refreshPlanned(tx, { machines: [machineId] }, nowMs);
  });
}

/** What a planogram file may refer to without defining it: the products and templates already kept. */
export async function knownPlanograms(db: Db): Promise<Known> {
  const [products, selections] = await Promise.all([
    db.selectFrom('products').select('code').execute(),
    db.selectFrom('template_selections').selectAll().execute(),
  ]);
  const templates = new Map<string, Map<number, PlannedValues>>();
  for (const s of selections) {
    let t = templates.get(s.template_id);
    if (t === undefined) templates.set(s.template_id, (t = new Map()));
    t.set(Number(s.selection), {
      productCode: s.product_code,
      capacity: Number(s.capacity),
      par: Number(s.par),
      threshold: Number(s.threshold),
      priceMilli: Number(s.price_milli),
    });
  }
  const ids = await db.selectFrom('templates').select('template_id').execute();
  for (const { template_id } of ids) if (!templates.has(template_id)) templates.set(template_id, new Map());
  return { products: new Set(products.map((p) => p.code)), templates };
}
