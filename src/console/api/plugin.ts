/**
 * The read API under /api/v1 (docs/console.md "The API"), as a fastify plugin of its own: a
 * bearer token on every route but the OpenAPI document (read-only tokens made by an admin,
 * src/console/store/token-queries.ts), a request limit per token counted in the database
 * (@fastify/rate-limit with a store there, so every instance counts against one limit), JSON
 * answers and errors, its own 404 and 405, and /api/v1/openapi.json built by @fastify/swagger
 * from the routes' schemas (OpenAPI 3.1).
 */
import fastifyRateLimit from '@fastify/rate-limit';
import fastifySwagger from '@fastify/swagger';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { VERSION } from '../../core/version.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { countRequest, tokenId } from '../store/token-queries.js';
import { withMethodNotAllowed } from '../web/method-not-allowed.js';
import { apiRoutes } from './routes.js';

export interface ApiOptions {
  db: Kysely<ConsoleDatabase>;
  requestsPerMinute: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The API token of the request (its row id); null until the API's hook checked it. */
    apiTokenId: number | null;
  }
}

/** An error answer of the API: `{ error: { code, message } }`. */
export function apiError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send({ error: { code, message } });
}

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  const m = typeof header === 'string' ? /^Bearer ([A-Za-z0-9_-]{1,100})$/.exec(header) : null;
  return m?.[1] ?? null;
}

/** A rate-limit store over the console's database (the plugin calls it once per request). */
function databaseStore(db: Kysely<ConsoleDatabase>) {
  return class DatabaseRateStore {
    incr(key: string, callback: (err: Error | null, r?: { current: number; ttl: number }) => void, window: number) {
      countRequest(db, key, window, Date.now()).then(
        (r) => callback(null, r),
        (err: Error) => callback(err),
      );
    }
    child() {
      return this;
    }
  };
}

async function checkToken(db: Kysely<ConsoleDatabase>, request: FastifyRequest, reply: FastifyReply) {
  if (request.routeOptions.config.apiPublic === true) return;
  const token = bearer(request);
  const id = token === null ? null : await tokenId(db, token, Date.now());
  if (id === null) {
    reply.header('WWW-Authenticate', 'Bearer realm="qrvend console API"');
    return apiError(
      reply,
      401,
      'unauthorized',
      'give an API token: Authorization: Bearer qrv_... (Accounts > API tokens)',
    );
  }
  request.apiTokenId = id;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An API route that needs no token (the OpenAPI document). */
    apiPublic?: boolean;
  }
}

export async function apiPlugin(app: FastifyInstance, options: ApiOptions): Promise<void> {
  app.decorateRequest('apiTokenId', null);
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'qrvend console API',
        version: VERSION,
        description: 'Read-only: machines, statuses, sales, alarms, audits, rollouts, stock and the event feed.',
      },
      servers: [{ url: '/api/v1' }],
      components: { securitySchemes: { token: { type: 'http', scheme: 'bearer' } } },
      security: [{ token: [] }],
    },
    // Only the GET routes are the API; the 405 answers for other methods are not documented.
    transform: ({ schema, url, route }) => ({
      schema: {
        ...(schema ?? {}),
        hide: schema?.hide === true || [route.method].flat().some((m) => m !== 'GET'),
      } as never,
      url: url.replace(/^\/api\/v1/, ''),
    }),
  });
  app.addHook('onRequest', (request, reply) => checkToken(options.db, request, reply));
  await app.register(fastifyRateLimit, {
    global: true,
    hook: 'preHandler',
    max: options.requestsPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => `token:${request.apiTokenId ?? 'none'}`,
    allowList: (request) => request.routeOptions.config.apiPublic === true,
    store: databaseStore(options.db),
    errorResponseBuilder: (_request, context) => ({
      statusCode: 429,
      error: {
        code: 'rate-limited',
        message: `at most ${context.max} requests a minute per token; retry after ${context.after}`,
      },
    }),
  });
  app.setErrorHandler((err: FastifyError, _request, reply) => {
    const status = err.statusCode ?? 500;
    if (status === 429) return reply.code(429).send({ error: (err as unknown as { error: unknown }).error });
    if (status >= 400 && status < 500) return apiError(reply, status, 'bad-request', err.message.slice(0, 300));
    app.log.error({ err: err.message }, 'console API request failed');
    return apiError(reply, 500, 'internal', 'the console could not answer: see its log');
  });
  app.setNotFoundHandler((_request, reply) =>
    apiError(reply, 404, 'not-found', 'no such API route (see /api/v1/openapi.json)'),
  );
  withMethodNotAllowed(app, () => {
    apiRoutes(app, options.db);
    app.get('/openapi.json', { schema: { hide: true }, config: { access: 'token', apiPublic: true } }, () =>
      app.swagger(),
    );
  });
}
