/**
 * The console's web server: fastify over node:http, or node:https with certFile/keyFile. It
 * serves the server-rendered pages, the CSV export, the live channel (Server-Sent Events) and the
 * console's own assets. Every page but /login, /assets and /healthz needs a session; /accounts
 * needs an admin (guard.ts). Pages and how to add one: routes.ts.
 */
import { createServer as createHttp, type RequestListener, type Server } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { readFileSync } from 'node:fs';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from '../../core/log.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { authRoutes, type AuthContext } from './auth-routes.js';
import { installGuard } from './guard.js';
import { withMethodNotAllowed } from './method-not-allowed.js';
import { MAX_FORM_BYTES, SECURITY_HEADERS, plain } from './http-kit.js';
import { LiveChannel } from './live.js';
import { badRequestText, badUrlText } from './params.js';
import { pageRoutes, publicRoutes } from './routes.js';
import { catalogPages } from './catalog-routes.js';
import { planogramPages } from './planogram-routes.js';
import { routePages } from './route-routes.js';
import { apiPlugin } from '../api/plugin.js';
import { reachRoutes, type ReachWeb } from './reach-routes.js';

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
  /** The API's request limit per token and minute (default 600). */
  apiRequestsPerMinute?: number;
  /** What the alert, webhook and token pages need (the receiver checks, the worker's nudge). */
  reach?: ReachWeb;
}

export interface ConsoleWeb {
  server: Server;
  url: string;
  live: LiveChannel;
  close(): Promise<void>;
}

/** node:http or node:https, with bounded time per request: a slow client holds a socket for seconds, not forever. */
function serverFactory(tls: WebOptions['tls']) {
  return (handler: RequestListener): Server => {
    const server =
      tls === null
        ? createHttp(handler)
        : (createHttps(
            { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) },
            handler,
          ) as unknown as Server);
    server.headersTimeout = 10_000;
    server.requestTimeout = 15_000;
    return server;
  };
}

/**
 * A 4xx from the framework (a parameter against its schema, a body too large or not a form) says
 * what was wrong; anything else is logged and answered 500.
 */
function errorAnswer(log: Logger) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // A parameter the page refused (params.ts): the sender's mistake, answered and not logged.
    const refused = badRequestText(err);
    if (refused !== null) return plain(reply, 400, refused);
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) return plain(reply, status, `${err.message.slice(0, 300)}\n`);
    log.error({ err: err.message, path: request.url.slice(0, 200) }, 'console request failed');
    return plain(reply, 500, 'the console could not answer: see its log\n');
  };
}

function buildApp(options: WebOptions, live: LiveChannel): FastifyInstance {
  const app = fastify({
    serverFactory: serverFactory(options.tls),
    bodyLimit: MAX_FORM_BYTES,
    // Behind the site's TLS proxy, one hop is trusted: the client is the last address it added to X-Forwarded-For.
    trustProxy: options.behindTlsProxy ? (_address: string, hop: number) => hop < 1 : false,
    exposeHeadRoutes: false,
    forceCloseConnections: true,
    // A machine id is at most 128 characters, 1,152 when each is percent-encoded UTF-8.
    routerOptions: { maxParamLength: 2048 },
    // A path fastify cannot route (a malformed %-escape): 400, with the headers of every answer.
    frameworkErrors: (err, request, reply) => {
      const message = err.message.slice(0, 300);
      const text = err.code === 'FST_ERR_BAD_URL' ? badUrlText(request.url, message) : `${message}\n`;
      return plain(reply.headers(SECURITY_HEADERS), err.statusCode ?? 400, text);
    },
  });
  // Forms only: no JSON or text body is read (a client sending one gets 415).
  app.removeAllContentTypeParsers();
  void app.register(fastifyCookie);
  void app.register(fastifyFormbody);
  app.addHook('onSend', async (_request, reply) => {
    reply.headers(SECURITY_HEADERS);
  });
  // A form posted without a body is an empty form: its missing CSRF token refuses it (403), not its shape.
  app.addHook('preValidation', async (request) => {
    request.body ??= {};
  });
  app.setErrorHandler(errorAnswer(options.log));
  app.setNotFoundHandler((_request, reply) => plain(reply, 404, 'not found\n'));
  installGuard(app, options.db, options.timeZone);
  const auth: AuthContext = {
    db: options.db,
    secureCookies: options.transport !== 'loopback',
    sessionMs: options.sessionHours * 3_600_000,
    loginFailures: options.login.failures,
    loginWindowMs: options.login.windowS * 1000,
  };
  withMethodNotAllowed(app, () => {
    publicRoutes(app, options.db);
    authRoutes(app, auth);
    const pages = { db: options.db, pageSize: options.pageSize, live };
    pageRoutes(app, pages);
    planogramPages(app, pages);
    routePages(app, pages);
    catalogPages(app, pages);
    reachRoutes(app, options.db, options.reach ?? null);
  });
  // The API is a plugin of its own under /api/v1, with its own token check, errors, 404 and 405.
  void app.register(apiPlugin, {
    prefix: '/api/v1',
    db: options.db,
    requestsPerMinute: options.apiRequestsPerMinute ?? 600,
  });
  return app;
}

export async function startWeb(options: WebOptions): Promise<ConsoleWeb> {
  const live = new LiveChannel();
  const app = buildApp(options, live);
  try {
    await app.listen({ port: options.listen.port, host: options.listen.host });
  } catch (err) {
    live.close();
    await app.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.listen.port;
  const host =
    options.listen.host.includes(':') && !options.listen.host.startsWith('[')
      ? `[${options.listen.host}]`
      : options.listen.host;
  return {
    server: app.server,
    url: `${options.tls === null ? 'http' : 'https'}://${host}:${port}`,
    live,
    close: async () => {
      live.close();
      await app.close();
    },
  };
}
