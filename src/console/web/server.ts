/**
 * The console's web server (node:http, or node:https with certFile/keyFile): server-rendered
 * pages, the CSV export, the live channel (Server-Sent Events) and the console's own assets.
 * Every page but /login, /assets and /healthz needs a session; /accounts needs an admin.
 */
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { Logger } from '../../core/log.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { sessionUser, type SessionUser } from '../store/accounts.js';
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
import { ping } from '../store/migrations.js';
import { CONSOLE_CSS } from './assets/stylesheet.js';
import { CONSOLE_JS } from './assets/live-script.js';
import {
  accountsPage,
  changeAccounts,
  login,
  logout,
  showLogin,
  SESSION_COOKIE,
  type AuthContext,
} from './auth-routes.js';
import { page, type Html } from './html.js';
import { parseCookies, redirect, send } from './http-kit.js';
import { LiveChannel } from './live.js';
import { badRequestText, machineIdParam } from './params.js';
import { machineBody, overviewBody, overviewQuery } from './pages/fleet.js';
import { alarmQuery, alarmsBody, auditQuery, auditsBody, rolloutsBody } from './pages/reports.js';
import { salesBody, salesCsv, salesQuery } from './pages/sales.js';

export interface WebOptions {
  db: Kysely<ConsoleDatabase>;
  log: Logger;
  listen: { host: string; port: number };
  tls: { certFile: string; keyFile: string } | null;
  /** 'loopback' plain HTTP drops the cookies' Secure flag; everything else keeps it. */
  transport: string;
  behindTlsProxy: boolean;
  sessionHours: number;
  /** The zone of times on the pages for an account that names none (default UTC). */
  timeZone?: string;
  login: { failures: number; windowS: number };
  pageSize: number;
}

export interface ConsoleWeb {
  server: Server;
  url: string;
  live: LiveChannel;
  close(): Promise<void>;
}

const HTML = 'text/html; charset=utf-8';

interface Ctx {
  auth: AuthContext;
  options: WebOptions;
  live: LiveChannel;
}

function show(res: ServerResponse, user: SessionUser, title: string, section: string, body: Html, status = 200): void {
  send(res, status, HTML, page({ title, user, section, live: true, body }));
}

async function salesView(ctx: Ctx, params: URLSearchParams) {
  const q = salesQuery(params, ctx.options.pageSize);
  const db = ctx.auth.db;
  const [days, byMachine, dead, unresolved] = await Promise.all([
    salesByDay(db, q),
    salesByMachineDay(db, q),
    deadLettered(db, q),
    unresolvedOutboxes(db),
  ]);
  return { q, days, byMachine, dead, unresolved };
}

async function pages(req: IncomingMessage, res: ServerResponse, ctx: Ctx, user: SessionUser, url: URL): Promise<void> {
  const db = ctx.auth.db;
  const size = ctx.options.pageSize;
  const p = url.pathname;
  if (p === '/') {
    const q = overviewQuery(url.searchParams, size);
    const [counts, result] = await Promise.all([fleetCounts(db), overview(db, q)]);
    return show(res, user, 'Fleet', '/', overviewBody(counts, result, q));
  }
  if (p.startsWith('/machines/')) {
    const id = machineIdParam(p.slice('/machines/'.length));
    const data = await machinePage(db, id);
    if (data === null) return send(res, 404, 'text/plain; charset=utf-8', 'no such machine\n');
    return show(res, user, `Machine ${id}`, '/', machineBody(data));
  }
  if (p === '/sales') return show(res, user, 'Sales', '/sales', salesBody(await salesView(ctx, url.searchParams)));
  if (p === '/sales.csv') {
    const q = salesQuery(url.searchParams, size);
    const { rows } = await salesByMachineDay(db, q, true);
    return send(res, 200, 'text/csv; charset=utf-8', salesCsv(rows), {
      'Content-Disposition': `attachment; filename="sales-${q.from}-${q.to}.csv"`,
    });
  }
  if (p === '/alarms') {
    const q = alarmQuery(url.searchParams, size);
    return show(res, user, 'Alarms', '/alarms', alarmsBody(await alarmList(db, q), q));
  }
  if (p === '/audits') {
    const q = auditQuery(url.searchParams, size);
    return show(res, user, 'Audits', '/audits', auditsBody(await auditList(db, q), q));
  }
  if (p === '/rollouts') {
    const version = (url.searchParams.get('version') ?? '').slice(0, 64);
    return show(res, user, 'Rollouts', '/rollouts', rolloutsBody(await rollouts(db, version)));
  }
  if (p === '/live') return ctx.live.attach(req, res);
  send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
}

async function route(req: IncomingMessage, res: ServerResponse, ctx: Ctx): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://console.invalid');
  const method = req.method ?? 'GET';
  const p = url.pathname;
  if (method === 'GET' && p === '/assets/console.css') return send(res, 200, 'text/css; charset=utf-8', CONSOLE_CSS);
  if (method === 'GET' && p === '/assets/console.js')
    return send(res, 200, 'text/javascript; charset=utf-8', CONSOLE_JS);
  if (method === 'GET' && p === '/favicon.ico') return send(res, 404, 'text/plain; charset=utf-8', 'no icon\n');
  if (method === 'GET' && p === '/healthz') {
    await ping(ctx.auth.db);
    return send(res, 200, 'text/plain; charset=utf-8', 'ok\n');
  }
  if (method === 'GET' && p === '/login') return showLogin(req, res, ctx.auth, null);
  if (method === 'POST' && p === '/login') return login(req, res, ctx.auth);
  const token = parseCookies(req.headers.cookie).get(SESSION_COOKIE);
  const user =
    token === undefined || token.length > 128 ? null : await sessionUser(ctx.auth.db, token, ctx.options.timeZone);
  if (user === null) {
    if (method === 'GET' && p !== '/live') return redirect(res, '/login');
    return send(res, 401, 'text/plain; charset=utf-8', 'log in first\n');
  }
  if (method === 'POST' && p === '/logout') return logout(req, res, ctx.auth, user);
  if (p === '/accounts' || p === '/accounts/delete') {
    if (user.role !== 'admin') return send(res, 403, 'text/plain; charset=utf-8', 'accounts are managed by an admin\n');
    if (method === 'GET' && p === '/accounts') return accountsPage(res, ctx.auth, user, null);
    if (method === 'POST') return changeAccounts(req, res, ctx.auth, user, p === '/accounts/delete');
  }
  if (method !== 'GET') return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { Allow: 'GET' });
  return pages(req, res, ctx, user, url);
}

export async function startWeb(options: WebOptions): Promise<ConsoleWeb> {
  const auth: AuthContext = {
    db: options.db,
    secureCookies: options.transport !== 'loopback',
    behindProxy: options.behindTlsProxy,
    sessionMs: options.sessionHours * 3_600_000,
    loginFailures: options.login.failures,
    loginWindowMs: options.login.windowS * 1000,
  };
  const live = new LiveChannel();
  const ctx: Ctx = { auth, options, live };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    route(req, res, ctx).catch((err: unknown) => {
      const refused = badRequestText(err);
      if (refused !== null && !res.headersSent) return send(res, 400, 'text/plain; charset=utf-8', refused);
      options.log.error({ err: (err as Error).message, path: req.url?.slice(0, 200) }, 'console request failed');
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'the console could not answer: see its log\n');
      else res.destroy();
    });
  };
  const server =
    options.tls === null
      ? createHttp(handler)
      : createHttps({ cert: readFileSync(options.tls.certFile), key: readFileSync(options.tls.keyFile) }, handler);
  // Bounded time per request: a slow client holds a socket for seconds, not forever.
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.listen.port, options.listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.listen.port;
  const host =
    options.listen.host.includes(':') && !options.listen.host.startsWith('[')
      ? `[${options.listen.host}]`
      : options.listen.host;
  return {
    server,
    url: `${options.tls === null ? 'http' : 'https'}://${host}:${port}`,
    live,
    close: async () => {
      live.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
