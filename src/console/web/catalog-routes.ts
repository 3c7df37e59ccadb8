/**
 * The catalog pages: each machine's document and where it stands, the pushes, preparing the next
 * documents (planners and admins), and a push's documents as the file `qrvend fleet catalog sign`
 * reads. The console signs nothing and publishes nothing (docs/console.md, "Security choices").
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { catalogMachines, catalogPushes, prepareCatalogs, pushDocuments } from '../store/catalog-queries.js';
import { machinesOfTemplate, templateSummaries } from '../store/planogram-reads.js';
import { userOf } from './guard.js';
import { formOf, formSchema, plain, queryParams, querySchema, seeOther } from './http-kit.js';
import { catalogBody, type CatalogView } from './pages/catalog.js';
import { machineList } from './route-routes.js';
import { show, type PageContext } from './routes.js';

async function catalogPage(
  ctx: PageContext,
  request: FastifyRequest,
  reply: FastifyReply,
  push: string | null,
  extra: Pick<CatalogView, 'message' | 'skipped'>,
  status = 200,
) {
  const [machines, pushes, templates] = await Promise.all([
    catalogMachines(ctx.db, push),
    catalogPushes(ctx.db, 20),
    templateSummaries(ctx.db),
  ]);
  const body = catalogBody({ push, machines, pushes, templates, user: userOf(request), ...extra });
  return show(reply, userOf(request), 'Catalog', '/catalog', body, status);
}

/** The machines a prepare form names: all with a planogram, a template's, or a list. */
async function scopeMachines(ctx: PageContext, scope: string, listed: string): Promise<string[]> {
  if (scope.startsWith('template:')) return machinesOfTemplate(ctx.db, scope.slice('template:'.length), 100_000);
  if (scope === 'list') return machineList(listed).slice(0, 100_000);
  const rows = await ctx.db.selectFrom('machine_templates').select('machine_id').execute();
  return rows.map((r) => r.machine_id);
}

export function catalogPages(app: FastifyInstance, ctx: PageContext): void {
  app.get('/catalog', { schema: { querystring: querySchema(['push', 'prepared', 'skipped']) } }, (request, reply) => {
    const params = queryParams(request.query);
    const push = (params.get('push') ?? '').slice(0, 40);
    const prepared = Number(params.get('prepared') ?? '0') || 0;
    const skipped = Number(params.get('skipped') ?? '0') || 0;
    const message =
      prepared === 0
        ? null
        : `Prepared ${prepared} document${prepared === 1 ? '' : 's'}: download, sign and push them as below.` +
          (skipped === 0 ? '' : ` ${skipped} machines were left out (no planogram, or a document too large).`);
    return catalogPage(ctx, request, reply, push === '' ? null : push, { message, skipped: [] });
  });
  app.get('/catalog/documents.json', { schema: { querystring: querySchema(['push']) } }, async (request, reply) => {
    const push = (queryParams(request.query).get('push') ?? '').slice(0, 40);
    const documents = await pushDocuments(ctx.db, push);
    if (documents.length === 0) return plain(reply, 404, 'no such push\n');
    return reply
      .type('application/json; charset=utf-8')
      .header('Content-Disposition', 'attachment; filename="catalog-documents.json"')
      .send(`${JSON.stringify({ documents }, null, 2)}\n`);
  });
  app.post(
    '/catalog/prepare',
    {
      config: { access: 'planner', csrf: true },
      schema: { body: formSchema(['csrf', 'scope', 'machines']) },
    },
    async (request, reply) => {
      const form = formOf(request.body);
      const machines = await scopeMachines(ctx, form.scope ?? '*', form.machines ?? '');
      const prepared = await prepareCatalogs(ctx.db, machines, userOf(request).name, Date.now());
      const n = prepared.documents.length;
      if (n === 0) {
        const message = 'No document was prepared.';
        return catalogPage(ctx, request, reply, null, { message, skipped: prepared.skipped }, 400);
      }
      // To the push's own page: a reload there prepares nothing again.
      const query = new URLSearchParams({
        push: prepared.preparedAt,
        prepared: String(n),
        skipped: String(prepared.skipped.length),
      });
      return seeOther(reply, `/catalog?${query.toString()}`);
    },
  );
}
