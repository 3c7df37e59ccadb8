/**
 * Planograms as the pages and the exports read them: the templates with how many machines run
 * each, one template, one machine's planogram (the template's values, the machine's own, what
 * holds), the products, and the whole set for a CSV or JSON export.
 */
import type { Kysely } from 'kysely';
import type { MachinePlan, Override, PlanogramSet, Product, Template } from '../route/planogram-rules.js';
import { productOf } from './planogram-store.js';
import type { ConsoleDatabase, SelectionOverridesTable, TemplateSelectionsTable } from './schema.js';

type Db = Kysely<ConsoleDatabase>;

function selectionOf(s: TemplateSelectionsTable) {
  return {
    selection: Number(s.selection),
    productCode: s.product_code,
    capacity: Number(s.capacity),
    par: Number(s.par),
    threshold: Number(s.threshold),
    priceMilli: Number(s.price_milli),
  };
}

function overrideOf(o: SelectionOverridesTable): Override {
  const out: Override = { selection: Number(o.selection) };
  if (o.product_code !== null) out.productCode = o.product_code;
  if (o.capacity !== null) out.capacity = Number(o.capacity);
  if (o.par !== null) out.par = Number(o.par);
  if (o.threshold !== null) out.threshold = Number(o.threshold);
  if (o.price_milli !== null) out.priceMilli = Number(o.price_milli);
  return out;
}

export async function productList(db: Db): Promise<Product[]> {
  const rows = await db.selectFrom('products').selectAll().orderBy('code').execute();
  return rows.map(productOf);
}

export interface TemplateSummary {
  templateId: string;
  model: string;
  updatedAt: string;
  selections: number;
  machines: number;
}

export async function templateSummaries(db: Db): Promise<TemplateSummary[]> {
  const rows = await db
    .selectFrom('templates as t')
    .select((eb) => [
      't.template_id',
      't.model',
      't.updated_at',
      eb
        .selectFrom('template_selections as s')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('s.template_id', '=', 't.template_id')
        .as('selections'),
      eb
        .selectFrom('machine_templates as m')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('m.template_id', '=', 't.template_id')
        .as('machines'),
    ])
    .orderBy('t.template_id')
    .execute();
  return rows.map((r) => ({
    templateId: r.template_id,
    model: r.model,
    updatedAt: r.updated_at,
    selections: Number(r.selections ?? 0),
    machines: Number(r.machines ?? 0),
  }));
}

export async function templateOf(db: Db, templateId: string): Promise<Template | null> {
  const t = await db.selectFrom('templates').selectAll().where('template_id', '=', templateId).executeTakeFirst();
  if (t === undefined) return null;
  const selections = await db
    .selectFrom('template_selections')
    .selectAll()
    .where('template_id', '=', templateId)
    .orderBy('selection')
    .execute();
  return { templateId, model: t.model, selections: selections.map(selectionOf) };
}

/** The machines running a template, at most `limit` of them. */
export async function machinesOfTemplate(db: Db, templateId: string, limit = 500): Promise<string[]> {
  const rows = await db
    .selectFrom('machine_templates')
    .select('machine_id')
    .where('template_id', '=', templateId)
    .orderBy('machine_id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.machine_id);
}

export interface MachinePlanogram {
  machineId: string;
  templateId: string | null;
  model: string;
  /** Per selection: the template's values, the machine's own over them (or null). */
  rows: { template: ReturnType<typeof selectionOf>; own: Override | null }[];
  products: Map<string, Product>;
}

export async function machinePlanogram(db: Db, machineId: string): Promise<MachinePlanogram> {
  const m = await db
    .selectFrom('machine_templates as m')
    .innerJoin('templates as t', 't.template_id', 'm.template_id')
    .select(['m.template_id', 't.model'])
    .where('m.machine_id', '=', machineId)
    .executeTakeFirst();
  const products = new Map((await productList(db)).map((p) => [p.code, p]));
  if (m === undefined) return { machineId, templateId: null, model: '', rows: [], products };
  const [template, own] = await Promise.all([
    templateOf(db, m.template_id),
    db.selectFrom('selection_overrides').selectAll().where('machine_id', '=', machineId).execute(),
  ]);
  const byselection = new Map(own.map((o) => [Number(o.selection), overrideOf(o)]));
  return {
    machineId,
    templateId: m.template_id,
    model: m.model,
    rows: (template?.selections ?? []).map((s) => ({ template: s, own: byselection.get(s.selection) ?? null })),
    products,
  };
}

/** Everything, for an export: products, templates, and each machine's template and own values. */
export async function readPlanogramSet(db: Db): Promise<PlanogramSet> {
  const [products, templates, selections, machines, overrides] = await Promise.all([
    productList(db),
    db.selectFrom('templates').selectAll().orderBy('template_id').execute(),
    db.selectFrom('template_selections').selectAll().orderBy('template_id').orderBy('selection').execute(),
    db.selectFrom('machine_templates').selectAll().orderBy('machine_id').execute(),
    db.selectFrom('selection_overrides').selectAll().orderBy('machine_id').orderBy('selection').execute(),
  ]);
  const tpl = new Map<string, Template>(
    templates.map((t) => [t.template_id, { templateId: t.template_id, model: t.model, selections: [] }]),
  );
  for (const s of selections) tpl.get(s.template_id)?.selections.push(selectionOf(s));
  const plans = new Map<string, MachinePlan>(
    machines.map((m) => [m.machine_id, { machineId: m.machine_id, templateId: m.template_id, overrides: [] }]),
  );
  for (const o of overrides) plans.get(o.machine_id)?.overrides.push(overrideOf(o));
  return { products, templates: [...tpl.values()], machines: [...plans.values()] };
}
