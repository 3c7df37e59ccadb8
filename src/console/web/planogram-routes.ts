/**
 * The planogram pages: templates and products, one template (its selections edited, applied to
 * machines), one machine's planogram (its own values), and planogram files imported and exported
 * as CSV or JSON. Every change is checked by src/console/route/planogram-rules.ts and refused
 * whole, each problem named, before anything is written. Changing is for planners and admins.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isQrvendError } from '../../core/errors.js';
import { readPlanogramCsv, readPlanogramJson, writePlanogramCsv, writePlanogramJson } from '../route/planogram-file.js';
import { RowReader, productFrom, namesField, overrideFrom, selectionFrom } from '../route/planogram-fields.js';
import { SetBuilder } from '../route/planogram-set.js';
import { codeOf, machineIdOf, valuesProblem, type Problem } from '../route/planogram-rules.js';
import {
  machinePlanogram,
  machinesOfTemplate,
  productList,
  readPlanogramSet,
  templateOf,
  templateSummaries,
} from '../store/planogram-reads.js';
import { applyTemplate, knownPlanograms, setOverride, writePlanogramSet } from '../store/planogram-store.js';
import { userOf } from './guard.js';
import { formOf, formSchema, plain, seeOther, type Form } from './http-kit.js';
import { machinePlanogramBody } from './pages/machine-planogram.js';
import { planogramsBody, templateBody } from './pages/planograms.js';
import { machineList } from './route-routes.js';
import { show, type PageContext } from './routes.js';

/** An import is larger than the console's other forms: up to 2 MiB of CSV or JSON. */
export const MAX_IMPORT_BYTES = 2 * 1024 * 1024;

const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
type WithId = { Params: { id: string } };
const idOf = (request: FastifyRequest<WithId>) => request.params.id.slice(0, 128);

type Outcome = { message: string | null; problems: Problem[]; status?: number };
const fine = (message: string | null): Outcome => ({ message, problems: [] });
const refusedWith = (message: string, problems: Problem[] = []): Outcome => ({ message, problems, status: 400 });

async function planogramsPage(ctx: PageContext, request: FastifyRequest, reply: FastifyReply, o: Outcome, text = '') {
  const [templates, products] = await Promise.all([templateSummaries(ctx.db), productList(ctx.db)]);
  const body = planogramsBody({ templates, products, user: userOf(request), importText: text, ...o });
  return show(reply, userOf(request), 'Planograms', '/planograms', body, o.status ?? 200);
}

async function importFile(ctx: PageContext, request: FastifyRequest, reply: FastifyReply) {
  const form = formOf(request.body);
  const text = form.text ?? '';
  const known = await knownPlanograms(ctx.db);
  const parsed = form.format === 'json' ? readPlanogramJson(text, known) : readPlanogramCsv(text, known);
  if (!parsed.ok) {
    const n = parsed.problems.length;
    const message = `Nothing was imported: ${n} problem${n === 1 ? '' : 's'} in the file.`;
    return planogramsPage(ctx, request, reply, refusedWith(message, parsed.problems.slice(0, 500)), text);
  }
  await writePlanogramSet(ctx.db, parsed.set, Date.now());
  const { products, templates, machines } = parsed.set;
  const message = `Imported ${products.length} products, ${templates.length} templates, ${machines.length} machines.`;
  return planogramsPage(ctx, request, reply, fine(message));
}

async function saveProduct(ctx: PageContext, request: FastifyRequest, reply: FastifyReply) {
  const form = formOf(request.body);
  const problems: Problem[] = [];
  const row = { get: (f: string) => form[f] ?? '', at: (f: string) => `the field ${f}` };
  const product = productFrom(new RowReader(row, problems), namesField);
  if (product === undefined)
    return planogramsPage(ctx, request, reply, refusedWith('The product is refused.', problems));
  await writePlanogramSet(ctx.db, { products: [product], templates: [], machines: [] }, Date.now());
  return planogramsPage(ctx, request, reply, fine(`Saved product ${product.code}.`));
}

function planogramListRoutes(app: FastifyInstance, ctx: PageContext): void {
  const planner = { access: 'planner', csrf: true } as const;
  app.get('/planograms', (request, reply) => planogramsPage(ctx, request, reply, fine(null)));
  app.get('/planograms/export.csv', async (_request, reply) =>
    reply
      .type('text/csv; charset=utf-8')
      .header('Content-Disposition', 'attachment; filename="planograms.csv"')
      .send(writePlanogramCsv(await readPlanogramSet(ctx.db))),
  );
  app.get('/planograms/export.json', async (_request, reply) =>
    reply
      .type('application/json; charset=utf-8')
      .header('Content-Disposition', 'attachment; filename="planograms.json"')
      .send(writePlanogramJson(await readPlanogramSet(ctx.db))),
  );
  app.post(
    '/planograms/import',
    { config: planner, bodyLimit: MAX_IMPORT_BYTES, schema: { body: formSchema(['csrf', 'format', 'text']) } },
    (request, reply) => importFile(ctx, request, reply),
  );
  const productForm = formSchema(['csrf', 'product', 'name', 'names', 'measurement', 'unit', 'age_limit']);
  app.post('/planograms/products', { config: planner, schema: { body: productForm } }, (request, reply) =>
    saveProduct(ctx, request, reply),
  );
  app.post(
    '/planograms/templates',
    { config: planner, schema: { body: formSchema(['csrf', 'template', 'model']) } },
    async (request, reply) => {
      const form = formOf(request.body);
      const id = codeOf(form.template ?? '', 'a template name');
      if (!id.ok) return planogramsPage(ctx, request, reply, refusedWith(`The template is refused: ${id.message}.`));
      if ((await templateOf(ctx.db, id.value)) === null) {
        const template = { templateId: id.value, model: (form.model ?? '').slice(0, 128), selections: [] };
        await writePlanogramSet(ctx.db, { products: [], templates: [template], machines: [] }, Date.now());
      }
      return seeOther(reply, `/planograms/templates/${encodeURIComponent(id.value)}`);
    },
  );
}

async function templatePage(ctx: PageContext, request: FastifyRequest<WithId>, reply: FastifyReply, o: Outcome) {
  const id = idOf(request);
  const [template, machines, summaries, products] = await Promise.all([
    templateOf(ctx.db, id),
    machinesOfTemplate(ctx.db, id, 200),
    templateSummaries(ctx.db),
    productList(ctx.db),
  ]);
  if (template === null) return plain(reply, 404, 'no such template\n');
  const machineCount = summaries.find((s) => s.templateId === id)?.machines ?? machines.length;
  const body = templateBody({ template, machines, machineCount, products, user: userOf(request), ...o });
  return show(reply, userOf(request), `Template ${id}`, '/planograms', body, o.status ?? 200);
}

/** The template's selections from its form's lines (s<i>_<field>), checked as an import's are. */
function templateFromForm(id: string, form: Form, known: Awaited<ReturnType<typeof knownPlanograms>>) {
  const b = new SetBuilder();
  const lines = Math.min(Number(form.lines ?? '0') || 0, 500);
  b.addTemplate(id, '', { get: () => '', at: () => 'the template' });
  for (let i = 0; i < lines; i++) {
    const get = (f: string) => form[`s${i}_${f}`] ?? '';
    const fields = ['selection', 'product', 'capacity', 'par', 'threshold', 'price'];
    if (fields.every((f) => get(f).trim() === '') || get('selection').trim() === '') continue;
    const row = { get, at: (f: string) => `line ${i + 1}, ${f}` };
    const s = selectionFrom(new RowReader(row, b.problems));
    if (s !== undefined) b.addSelection(id, s, row);
  }
  const result = b.result({ ...known, templates: new Map() });
  if (result.ok) result.set.templates[0]!.model = (form.model ?? '').slice(0, 128);
  return result;
}

function templateRoutes(app: FastifyInstance, ctx: PageContext): void {
  const planner = { access: 'planner', csrf: true } as const;
  app.get<WithId>('/planograms/templates/:id', { schema: { params: idParams } }, (request, reply) =>
    templatePage(ctx, request, reply, fine(null)),
  );
  const editForm = {
    type: 'object',
    properties: { csrf: { type: 'string' }, model: { type: 'string' }, lines: { type: 'string' } },
    patternProperties: { '^s[0-9]{1,3}_(selection|product|capacity|par|threshold|price)$': { type: 'string' } },
  } as const;
  app.post<WithId>(
    '/planograms/templates/:id',
    { config: planner, schema: { params: idParams, body: editForm } },
    async (request, reply) => {
      const id = idOf(request);
      if ((await templateOf(ctx.db, id)) === null) return plain(reply, 404, 'no such template\n');
      const parsed = templateFromForm(id, formOf(request.body), await knownPlanograms(ctx.db));
      if (!parsed.ok) return templatePage(ctx, request, reply, refusedWith('Nothing was saved.', parsed.problems));
      await writePlanogramSet(ctx.db, parsed.set, Date.now());
      return templatePage(ctx, request, reply, fine(`Saved ${id}: its machines' planograms follow.`));
    },
  );
  app.post<WithId>(
    '/planograms/templates/:id/apply',
    { config: planner, schema: { params: idParams, body: formSchema(['csrf', 'machines']) } },
    async (request, reply) => {
      const id = idOf(request);
      if ((await templateOf(ctx.db, id)) === null) return plain(reply, 404, 'no such template\n');
      const machines = machineList(formOf(request.body).machines ?? '').slice(0, 10_001);
      const bad = machines.filter((m) => !machineIdOf(m).ok);
      if (bad.length > 0 || machines.length === 0 || machines.length > 10_000) {
        const why = machines.length === 0 ? 'no machine named' : `not machine ids: ${bad.slice(0, 20).join(', ')}`;
        return templatePage(ctx, request, reply, refusedWith(`Applied to none: ${why}.`));
      }
      await applyTemplate(ctx.db, id, machines, Date.now());
      return templatePage(ctx, request, reply, fine(`Applied ${id} to ${machines.length} machines.`));
    },
  );
}

async function machinePlanogramPage(
  ctx: PageContext,
  request: FastifyRequest<WithId>,
  reply: FastifyReply,
  o: Outcome,
) {
  const id = idOf(request);
  const body = machinePlanogramBody({ plan: await machinePlanogram(ctx.db, id), user: userOf(request), ...o });
  return show(reply, userOf(request), `Planogram of ${id}`, '/planograms', body, o.status ?? 200);
}

async function saveOverride(ctx: PageContext, request: FastifyRequest<WithId>, reply: FastifyReply) {
  const id = idOf(request);
  const form = formOf(request.body);
  const problems: Problem[] = [];
  const row = { get: (f: string) => form[f] ?? '', at: (f: string) => `the field ${f}` };
  const o = overrideFrom(new RowReader(row, problems));
  const plan = await machinePlanogram(ctx.db, id);
  const base = plan.rows.find((r) => r.template.selection === o?.selection)?.template;
  if (o === undefined) return machinePlanogramPage(ctx, request, reply, refusedWith('Nothing was saved.', problems));
  if (base === undefined)
    return machinePlanogramPage(ctx, request, reply, refusedWith(`Selection ${o.selection} is not in the template.`));
  if (o.productCode !== undefined && !plan.products.has(o.productCode))
    return machinePlanogramPage(ctx, request, reply, refusedWith(`Product ${o.productCode} is not defined.`));
  const problem = valuesProblem({ ...base, ...o });
  if (problem !== null) return machinePlanogramPage(ctx, request, reply, refusedWith(`Nothing was saved: ${problem}.`));
  const { selection, ...values } = o;
  await setOverride(ctx.db, id, selection, values, Date.now());
  return machinePlanogramPage(ctx, request, reply, fine(`Saved selection ${selection}.`));
}

function machineRoutes(app: FastifyInstance, ctx: PageContext): void {
  app.get<WithId>('/machines/:id/planogram', { schema: { params: idParams } }, (request, reply) =>
    machinePlanogramPage(ctx, request, reply, fine(null)),
  );
  const overrideForm = formSchema(['csrf', 'selection', 'product', 'capacity', 'par', 'threshold', 'price']);
  app.post<WithId>(
    '/machines/:id/planogram',
    { config: { access: 'planner', csrf: true }, schema: { params: idParams, body: overrideForm } },
    async (request, reply) => {
      try {
        return await saveOverride(ctx, request, reply);
      } catch (err) {
        if (isQrvendError(err)) return machinePlanogramPage(ctx, request, reply, refusedWith(err.message));
        throw err;
      }
    },
  );
}

/** Registers the planogram pages (called inside server.ts's withMethodNotAllowed). */
export function planogramPages(app: FastifyInstance, ctx: PageContext): void {
  planogramListRoutes(app, ctx);
  templateRoutes(app, ctx);
  machineRoutes(app, ctx);
}
