/**
 * The console's pages as fastify routes (server.ts builds the server; auth-routes.ts has /login,
 * /logout and /accounts).
 *
 * Adding a page (docs/console.md "Adding a page"):
 * 1. Its HTML in pages/<name>.ts: a function from the data to `Html`, built with the `html` tagged
 *    template (html.ts), which escapes every interpolated value unless it is `Html` already. No
 *    inline script or style (the CSP refuses both); what moves is /assets/console.js's business.
 * 2. Its query in store/ (the data layer), never SQL here.
 * 3. A route below: `app.get(path, { schema, config }, handler)`. `schema.querystring` and
 *    `schema.params` name the parameters it reads (`querySchema`: one string each; a repeated or
 *    wrong one is answered 400 naming it); the handler reads them with `queryParams(request.query)`
 *    or `request.params`; a value it cannot take throws params.ts's `refused(name, why)`, answered
 *    400 naming it and not logged. `config.access` is `user` unless said (`public`, `admin`); the guard
 *    (guard.ts) answers before the handler when the session or role is missing, and `userOf()`
 *    gives the account. Answer with `show()` (a page in the frame) or `plain()`.
 * 4. A form that changes something: `app.post(path, { config: { csrf: true }, schema: { body:
 *    formSchema([...fields, 'csrf']) } }, ...)`, the form carrying `<input type="hidden"
 *    name="csrf" value="${user.csrf}">`; the guard refuses it (403) without the session's token or
 *    from another site. Bodies are urlencoded forms of at most MAX_FORM_BYTES (413 beyond, 415 for
 *    another type). After the change, answer the page again or `seeOther()` to it.
 * 5. A link in html.ts's SECTIONS if it is a section; a test in test/console/web/ through
 *    WebClient, and a look at it in the browser test (test/console/browser/).
 * Routes are registered inside server.ts's `withMethodNotAllowed` callback, so a path answers 405
 * (with Allow) to the methods it lacks, 404 when nothing matches. A new room of routes (its own
 * file, e.g. alert-routes.ts with a function like pageRoutes) is called from that callback too.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import type { SessionUser } from '../store/accounts.js';
import { ping } from '../store/migrations.js';
import { fleetCounts, machinePage, overview } from '../store/page-queries.js';
import {
  alarmList,
  auditList,
  deadLettered,
  rollouts,
  salesByDay,
  salesByMachineDay,
  unresolvedOutboxes,
} from '../store/report-queries.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { CONSOLE_JS } from './assets/live-script.js';
import { CONSOLE_CSS } from './assets/stylesheet.js';
import { userOf } from './guard.js';
import { page, type Html } from './html.js';
import { HTML, plain, queryParams, querySchema } from './http-kit.js';
import type { LiveChannel } from './live.js';
import { machineIdParam } from './params.js';
import { machineBody, overviewBody, overviewQuery } from './pages/fleet.js';
import { alarmQuery, alarmsBody, auditQuery, auditsBody, rolloutsBody } from './pages/reports.js';
import { salesBody, salesCsv, salesQuery } from './pages/sales.js';

export interface PageContext {
  db: Kysely<ConsoleDatabase>;
  pageSize: number;
  live: LiveChannel;
}

/** A page in the console's frame (navigation, title, live refresh of its #live section). */
export function show(
  reply: FastifyReply,
  user: SessionUser,
  title: string,
  section: string,
  body: Html,
  status = 200,
): FastifyReply {
  return reply
    .code(status)
    .type(HTML)
    .send(page({ title, user, section, live: true, body }));
}

/** The console's own files and the health check: no session needed. */
export function publicRoutes(app: FastifyInstance, db: Kysely<ConsoleDatabase>): void {
  const config = { access: 'public' } as const;
  app.get('/assets/console.css', { config }, (_req, reply) => reply.type('text/css; charset=utf-8').send(CONSOLE_CSS));
  app.get('/assets/console.js', { config }, (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').send(CONSOLE_JS),
  );
  app.get('/favicon.ico', { config }, (_req, reply) => plain(reply, 404, 'no icon\n'));
  app.get('/healthz', { config }, async (_req, reply) => {
    await ping(db);
    return plain(reply, 200, 'ok\n');
  });
}

const SALES_QUERY = querySchema(['from', 'to', 'machine', 'page']);

async function salesView(ctx: PageContext, params: URLSearchParams) {
  const q = salesQuery(params, ctx.pageSize);
  const [days, byMachine, dead, unresolved] = await Promise.all([
    salesByDay(ctx.db, q),
    salesByMachineDay(ctx.db, q),
    deadLettered(ctx.db, q),
    unresolvedOutboxes(ctx.db),
  ]);
  return { q, days, byMachine, dead, unresolved };
}

function salesRoutes(app: FastifyInstance, ctx: PageContext): void {
  app.get('/sales', { schema: { querystring: SALES_QUERY } }, async (request, reply) => {
    const view = await salesView(ctx, queryParams(request.query));
    return show(reply, userOf(request), 'Sales', '/sales', salesBody(view));
  });
  app.get('/sales.csv', { schema: { querystring: SALES_QUERY } }, async (request, reply) => {
    const q = salesQuery(queryParams(request.query), ctx.pageSize);
    const { rows } = await salesByMachineDay(ctx.db, q, true);
    return reply
      .type('text/csv; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="sales-${q.from}-${q.to}.csv"`)
      .send(salesCsv(rows));
  });
}

function fleetRoutes(app: FastifyInstance, ctx: PageContext): void {
  app.get('/', { schema: { querystring: querySchema(['filter', 'q', 'page']) } }, async (request, reply) => {
    const q = overviewQuery(queryParams(request.query), ctx.pageSize);
    const [counts, result] = await Promise.all([fleetCounts(ctx.db), overview(ctx.db, q)]);
    return show(reply, userOf(request), 'Fleet', '/', overviewBody(counts, result, q));
  });
  const machineParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
  app.get<{ Params: { id: string } }>(
    '/machines/:id',
    { schema: { params: machineParams } },
    async (request, reply) => {
      // Decoded once, from the path as sent (params.ts): fastify's decoded copy would be decoded twice.
      const id = machineIdParam((request.url.split('?')[0] ?? '').slice('/machines/'.length));
      const data = await machinePage(ctx.db, id);
      if (data === null) return plain(reply, 404, 'no such machine\n');
      return show(reply, userOf(request), `Machine ${id}`, '/', machineBody(data));
    },
  );
}

function reportRoutes(app: FastifyInstance, ctx: PageContext): void {
  const alarms = { querystring: querySchema(['state', 'code', 'page']) };
  app.get('/alarms', { schema: alarms }, async (request, reply) => {
    const q = alarmQuery(queryParams(request.query), ctx.pageSize);
    return show(reply, userOf(request), 'Alarms', '/alarms', alarmsBody(await alarmList(ctx.db, q), q));
  });
  app.get('/audits', { schema: { querystring: querySchema(['verdict', 'page']) } }, async (request, reply) => {
    const q = auditQuery(queryParams(request.query), ctx.pageSize);
    return show(reply, userOf(request), 'Audits', '/audits', auditsBody(await auditList(ctx.db, q), q));
  });
  app.get('/rollouts', { schema: { querystring: querySchema(['version']) } }, async (request, reply) => {
    const version = (queryParams(request.query).get('version') ?? '').slice(0, 64);
    return show(reply, userOf(request), 'Rollouts', '/rollouts', rolloutsBody(await rollouts(ctx.db, version)));
  });
}

/** Every page that needs a session, and the live channel. */
export function pageRoutes(app: FastifyInstance, ctx: PageContext): void {
  fleetRoutes(app, ctx);
  salesRoutes(app, ctx);
  reportRoutes(app, ctx);
  app.get('/live', { config: { noLoginRedirect: true } }, (request, reply) => {
    if (ctx.live.full)
      return reply
        .code(503)
        .header('Retry-After', '30')
        .type('text/plain; charset=utf-8')
        .send('too many live pages open\n');
    // The stream outlives the request: fastify lets go of it and the channel writes it.
    reply.hijack();
    ctx.live.attach(request.raw, reply.raw);
  });
}
