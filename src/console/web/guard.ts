/**
 * Who may ask what, as fastify hooks. Each route says it in its `config` (routes.ts): `access`
 * (`public`, `user` the default, `admin`) and `csrf` (a form that changes something). The session
 * is looked up before the body is read, so a request without one is answered before its body is;
 * the CSRF token is checked after the form is parsed, before the handler runs.
 *
 * The CSRF token is ours, not @fastify/csrf-protection's: it is a random token kept in the
 * session's database row (synchronizer token), so every console instance checks it, it ends with
 * the session (logout, a new password), and no secret sits in a cookie of its own. The plugin
 * would keep its secret in a cookie (double submit, which a cookie set by a sibling host can
 * forge) or in a session plugin's store that the console does not use.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { sessionUser, type SessionUser } from '../store/accounts.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { crossOrigin, formOf, plain, sameText, seeOther } from './http-kit.js';

export const SESSION_COOKIE = 'qrc_session';

/** `token`: an API route (/api/v1), whose own hook checks its bearer token instead of a session. */
export type Access = 'public' | 'user' | 'planner' | 'admin' | 'token';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Who may ask: `public` (no session), `user` (any account; the default), `planner` (a planner
     * or an admin), `admin`.
     */
    access?: Access;
    /** A form that changes something: refused (403) unless same-site and its `csrf` field is the session's token. */
    csrf?: boolean;
    /** Without a session, answer 401 rather than redirect to the login page (a stream, not a page). */
    noLoginRedirect?: boolean;
  }
  interface FastifyRequest {
    /** The logged-in account; null only on public routes. */
    consoleUser: SessionUser | null;
  }
}

/** The logged-in account of a request on a route that is not public (the guard let it through). */
export function userOf(request: FastifyRequest): SessionUser {
  if (request.consoleUser === null) throw new Error('no session on a route that needs one');
  return request.consoleUser;
}

async function checkSession(
  db: Kysely<ConsoleDatabase>,
  timeZone: string | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const config = request.routeOptions.config;
  // A path under /api/ that no route has is the API's 404: its own hook answers it (token, then 404).
  const access: Access = config.access ?? (request.url.startsWith('/api/') ? 'token' : 'user');
  if (access === 'public' || access === 'token') return;
  const token = request.cookies[SESSION_COOKIE];
  const user = token === undefined || token.length > 128 ? null : await sessionUser(db, token, timeZone);
  if (user === null) {
    if (request.method === 'GET' && config.noLoginRedirect !== true) return seeOther(reply, '/login');
    return plain(reply, 401, 'log in first\n');
  }
  request.consoleUser = user;
  if (access === 'admin' && user.role !== 'admin') return plain(reply, 403, 'accounts are managed by an admin\n');
  if (access === 'planner' && user.role === 'viewer')
    return plain(reply, 403, 'planograms, routes and fills are changed by a planner or an admin\n');
}

async function checkCsrf(request: FastifyRequest, reply: FastifyReply) {
  if (request.routeOptions.config.csrf !== true) return;
  const form = formOf(request.body);
  if (crossOrigin(request.headers) || !sameText(form.csrf ?? '', userOf(request).csrf)) {
    return plain(reply, 403, 'refused: this form is stale or came from another site; reload the page\n');
  }
}

/**
 * Installs the session, role and CSRF checks on every route of `app` (and on its 404s). `timeZone`
 * is the console's, for an account that names none (sessionUser()).
 */
export function installGuard(app: FastifyInstance, db: Kysely<ConsoleDatabase>, timeZone?: string): void {
  app.decorateRequest('consoleUser', null);
  // A hook that answers returns the reply, so fastify goes no further with the request.
  app.addHook('onRequest', (request, reply) => checkSession(db, timeZone, request, reply));
  app.addHook('preHandler', checkCsrf);
}
