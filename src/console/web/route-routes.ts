/**
 * The route's pages (docs/console.md, "A day on the route"): stock, "price differs", routes and
 * the machines that need a visit, a route's day, its pick list (A4 and CSV), and the driver's
 * visit page, whose form records a fill. Reading is for every account; changing a route and
 * recording a fill is for planners and admins (guard.ts, access `planner`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isQrvendError } from '../../core/errors.js';
import { productList } from '../store/planogram-reads.js';
import { pricesDiffering, recordFill } from '../store/route-queries.js';
import {
  MAX_ROUTE_MACHINES,
  deleteRoute,
  machinesNeedingVisit,
  routeDay,
  routeSummaries,
  saveRoute,
} from '../store/route-store.js';
import { fleetStock, machineStock } from '../store/stock-reads.js';
import { userOf } from './guard.js';
import { pageParam } from './html.js';
import { formOf, formSchema, plain, queryParams, querySchema, seeOther } from './http-kit.js';
import { pickListBody, pickListCsv } from './pages/pick-list.js';
import { dayParam } from './pages/route-kit.js';
import { routeDayBody, routesBody } from './pages/routes.js';
import { fleetStockBody, machineStockBody, pricesBody } from './pages/stock.js';
import { visitBody, type VisitView } from './pages/visit.js';
import { show, type PageContext } from './routes.js';

const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
type WithId = { Params: { id: string } };
const idOf = (request: FastifyRequest<WithId>) => request.params.id.slice(0, 128);

/** The machine ids of a text box: one a line, or split by commas or spaces. */
export function machineList(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[\s,;]+/)
        .map((m) => m.trim())
        .filter((m) => m !== ''),
    ),
  ];
}

function stockRoutes(app: FastifyInstance, ctx: PageContext): void {
  app.get('/stock', { schema: { querystring: querySchema(['q', 'page']) } }, async (request, reply) => {
    const params = queryParams(request.query);
    const page = pageParam(params.get('page'));
    const q = (params.get('q') ?? '').slice(0, 128);
    const nowMs = Date.now();
    const [result, differing] = await Promise.all([
      fleetStock(ctx.db, { nowMs, q, limit: ctx.pageSize, offset: (page - 1) * ctx.pageSize }),
      pricesDiffering(ctx.db, undefined, 10_000),
    ]);
    const body = fleetStockBody({ ...result, page, pageSize: ctx.pageSize, q, pricesDiffer: differing.length });
    return show(reply, userOf(request), 'Stock', '/stock', body);
  });
  app.get<WithId>('/stock/:id', { schema: { params: idParams } }, async (request, reply) => {
    const id = idOf(request);
    const stock = await machineStock(ctx.db, id, Date.now());
    if (stock.lines.length === 0) return plain(reply, 404, 'no stock kept for this machine: apply a template\n');
    return show(reply, userOf(request), `Stock of ${id}`, '/stock', machineStockBody(stock));
  });
  app.get('/prices', async (request, reply) => {
    const rows = await pricesDiffering(ctx.db, undefined, 2000);
    return show(reply, userOf(request), 'Price differs', '/stock', pricesBody(rows));
  });
}

async function routesPage(ctx: PageContext, request: FastifyRequest, reply: FastifyReply, message: string | null) {
  const params = queryParams(request.query);
  const nowMs = Date.now();
  const { day, dayMs } = dayParam(params.get('day'), nowMs);
  const page = pageParam(params.get('page'));
  const [routes, needs] = await Promise.all([
    routeSummaries(ctx.db),
    machinesNeedingVisit(ctx.db, { dayMs, nowMs, limit: ctx.pageSize, offset: (page - 1) * ctx.pageSize }),
  ]);
  const user = userOf(request);
  const body = routesBody({ routes, day, dayMs, needs, page, pageSize: ctx.pageSize, user, message });
  return show(reply, user, 'Routes', '/routes', body, message === null ? 200 : 400);
}

function routeRoutes(app: FastifyInstance, ctx: PageContext): void {
  const dayQuery = { querystring: querySchema(['day', 'page']) };
  app.get('/routes', { schema: dayQuery }, (request, reply) => routesPage(ctx, request, reply, null));
  const weekdays = ['wd0', 'wd1', 'wd2', 'wd3', 'wd4', 'wd5', 'wd6'];
  const routeForm = { body: formSchema(['csrf', 'route', 'machines', ...weekdays]) };
  app.post('/routes', { config: { access: 'planner', csrf: true }, schema: routeForm }, async (request, reply) => {
    const form = formOf(request.body);
    const routeId = (form.route ?? '').trim();
    const days = weekdays.flatMap((w, d) => (form[w] === '1' ? [d] : []));
    const machines = machineList(form.machines ?? '').slice(0, MAX_ROUTE_MACHINES + 1);
    try {
      await saveRoute(ctx.db, routeId, days, machines);
    } catch (err) {
      if (isQrvendError(err)) return routesPage(ctx, request, reply, err.message);
      throw err;
    }
    return seeOther(reply, `/routes/${encodeURIComponent(routeId)}`);
  });
  app.post(
    '/routes/delete',
    { config: { access: 'planner', csrf: true }, schema: { body: formSchema(['csrf', 'route']) } },
    async (request, reply) => {
      await deleteRoute(ctx.db, formOf(request.body).route ?? '');
      return seeOther(reply, '/routes');
    },
  );
  app.get<WithId>('/routes/:id', { schema: { params: idParams, ...dayQuery } }, async (request, reply) => {
    const nowMs = Date.now();
    const { day, dayMs } = dayParam(queryParams(request.query).get('day'), nowMs);
    const r = await routeDay(ctx.db, idOf(request), dayMs, nowMs);
    if (r === null) return plain(reply, 404, 'no such route\n');
    return show(reply, userOf(request), `Route ${r.routeId}`, '/routes', routeDayBody(r, userOf(request), day));
  });
  app.get<WithId>('/routes/:id/pick', { schema: { params: idParams, ...dayQuery } }, async (request, reply) => {
    const nowMs = Date.now();
    const { day, dayMs } = dayParam(queryParams(request.query).get('day'), nowMs);
    const [r, products] = await Promise.all([routeDay(ctx.db, idOf(request), dayMs, nowMs), productList(ctx.db)]);
    if (r === null) return plain(reply, 404, 'no such route\n');
    const body = pickListBody(r, products, day, new Date(nowMs).toISOString());
    return show(reply, userOf(request), `Pick list: ${r.routeId}`, '/routes', body);
  });
  app.get<WithId>('/routes/:id/pick.csv', { schema: { params: idParams, ...dayQuery } }, async (request, reply) => {
    const nowMs = Date.now();
    const { day, dayMs } = dayParam(queryParams(request.query).get('day'), nowMs);
    const [r, products] = await Promise.all([routeDay(ctx.db, idOf(request), dayMs, nowMs), productList(ctx.db)]);
    if (r === null) return plain(reply, 404, 'no such route\n');
    const file = `pick-${r.routeId.replace(/[^A-Za-z0-9._-]/g, '_')}-${day}.csv`;
    return reply
      .type('text/csv; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="${file}"`)
      .send(pickListCsv(r, products));
  });
}

async function visitPage(
  ctx: PageContext,
  request: FastifyRequest<WithId>,
  reply: FastifyReply,
  extra: Pick<VisitView, 'message' | 'error' | 'sent' | 'note'>,
  status = 200,
) {
  const id = idOf(request);
  const [stock, products] = await Promise.all([machineStock(ctx.db, id, Date.now()), productList(ctx.db)]);
  if (stock.lines.length === 0) return plain(reply, 404, 'no stock kept for this machine: apply a template\n');
  const last = stock.fills[0];
  const view: VisitView = {
    machineId: id,
    lines: stock.lines,
    names: new Map(products.map((p) => [p.code, p.name])),
    lastFill: last === undefined ? null : { at: last.at, by: last.by },
    user: userOf(request),
    ...extra,
  };
  // No live refresh: a half-typed count must stay as it is.
  return show(reply, userOf(request), `Visit ${id}`, '/routes', visitBody(view), status, false);
}

const FILL_FORM = {
  type: 'object',
  properties: { csrf: { type: 'string' }, note: { type: 'string' }, mode: { type: 'string' } },
  patternProperties: { '^c[0-9]{1,4}$': { type: 'string' } },
} as const;

function visitRoutes(app: FastifyInstance, ctx: PageContext): void {
  const none = { message: null, error: false, sent: {}, note: '' };
  app.get<WithId>(
    '/visit/:id',
    { schema: { params: idParams, querystring: querySchema(['filled']) } },
    (request, reply) => {
      const filled = queryParams(request.query).get('filled') === '1';
      return visitPage(ctx, request, reply, { ...none, message: filled ? 'The fill is recorded.' : null });
    },
  );
  app.post<WithId>(
    '/visit/:id',
    { config: { access: 'planner', csrf: true }, schema: { params: idParams, body: FILL_FORM } },
    async (request, reply) => {
      const form = formOf(request.body);
      const note = (form.note ?? '').slice(0, 500);
      const sent: Record<string, string> = {};
      for (const [k, v] of Object.entries(form)) if (/^c\d{1,4}$/.test(k) && typeof v === 'string') sent[k] = v;
      const counts =
        form.mode === 'par'
          ? ('par' as const)
          : Object.fromEntries(Object.entries(sent).map(([k, v]) => [k.slice(1), /^\d+$/.test(v) ? Number(v) : NaN]));
      try {
        await recordFill(ctx.db, {
          machineId: idOf(request),
          counts,
          user: userOf(request).name,
          note,
          nowMs: Date.now(),
        });
      } catch (err) {
        if (!isQrvendError(err)) throw err;
        return visitPage(ctx, request, reply, { message: err.message, error: true, sent, note }, 400);
      }
      return seeOther(reply, `/visit/${encodeURIComponent(idOf(request))}?filled=1`);
    },
  );
}

/** Registers the route's pages (called inside server.ts's withMethodNotAllowed). */
export function routePages(app: FastifyInstance, ctx: PageContext): void {
  stockRoutes(app, ctx);
  routeRoutes(app, ctx);
  visitRoutes(app, ctx);
}
