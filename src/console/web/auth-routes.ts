/**
 * Logging in and out, and the accounts page. Login: a CSRF token bound to a pre-login cookie
 * (double submit), limits per address and per account counted in the database before the
 * password is checked (so every instance sees them, and a burst cannot outrun them), scrypt
 * checked even for an unknown account (same time either way).
 *
 * The login limit is ours, not @fastify/rate-limit's: that plugin counts requests per key in
 * memory (or a Redis store), while this limit counts per address and per account across every
 * instance in the console's own database, reserves before the password is checked and gives a
 * reservation back on success (docs/console.md "Security choices").
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import {
  changeAccount,
  createSession,
  decoyHash,
  deleteUser,
  endSession,
  findUser,
  listUsers,
  loginSucceeded,
  putUser,
  reserveLoginAttempt,
  verifyPassword,
  type SessionUser,
} from '../store/accounts.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { isQrvendError } from '../../core/errors.js';
import { SESSION_COOKIE, userOf } from './guard.js';
import { HTML, cookieOptions, crossOrigin, formOf, formSchema, sameText, seeOther } from './http-kit.js';
import { page } from './html.js';
import { accountsBody, loginBody } from './pages/accounts.js';

const LOGIN_COOKIE = 'qrc_login';

export interface AuthContext {
  db: Kysely<ConsoleDatabase>;
  secureCookies: boolean;
  sessionMs: number;
  loginFailures: number;
  loginWindowMs: number;
}

function showLogin(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: AuthContext,
  error: string | null,
  status = 200,
): FastifyReply {
  // One token per browser, kept while it lives: a second login page (another tab, a redirected
  // request) must not invalidate the form already shown.
  const held = request.cookies[LOGIN_COOKIE] ?? '';
  const token = /^[A-Za-z0-9_-]{32}$/.test(held) ? held : randomBytes(24).toString('base64url');
  const body = page({ title: 'Log in', user: null, section: '', live: false, body: loginBody(token, error) });
  reply.setCookie(LOGIN_COOKIE, token, cookieOptions(3600, ctx.secureCookies));
  return reply.code(status).type(HTML).send(body);
}

/**
 * The client's address for the login limits: the socket's, or behind the site's TLS proxy the
 * last address the proxy appended to X-Forwarded-For (the one entry a client cannot forge): the
 * server trusts exactly one proxy hop then (server.ts, `trustProxy`).
 */
function clientAddress(request: FastifyRequest): string {
  return (request.ip ?? 'unknown').slice(0, 64);
}

async function login(request: FastifyRequest, reply: FastifyReply, ctx: AuthContext): Promise<FastifyReply> {
  const form = formOf(request.body);
  const pre = request.cookies[LOGIN_COOKIE] ?? '';
  if (crossOrigin(request.headers) || !sameText(form.csrf ?? '', pre)) {
    return showLogin(request, reply, ctx, 'The form expired: log in again.', 403);
  }
  const name = (form.name ?? '').slice(0, 64);
  const password = form.password ?? '';
  const addressKey = `addr:${clientAddress(request)}`;
  const accountKey = `user:${name.toLowerCase()}`;
  // Counted before the password is checked (docs/console.md "Security choices"): a burst of
  // guesses sent at once is checked no further than the limit.
  if (!(await reserveLoginAttempt(ctx.db, [addressKey, accountKey], ctx.loginFailures, ctx.loginWindowMs))) {
    return showLogin(request, reply, ctx, 'Too many failed logins: wait a few minutes and try again.', 429);
  }
  const user = await findUser(ctx.db, name);
  const ok = await verifyPassword(password, user?.password_hash ?? (await decoyHash()));
  if (user === undefined || !ok) return showLogin(request, reply, ctx, 'Wrong account or password.', 401);
  await loginSucceeded(ctx.db, addressKey, accountKey);
  const session = await createSession(ctx.db, user.name, ctx.sessionMs);
  reply.setCookie(SESSION_COOKIE, session.token, cookieOptions(Math.floor(ctx.sessionMs / 1000), ctx.secureCookies));
  reply.setCookie(LOGIN_COOKIE, '', cookieOptions(0, ctx.secureCookies));
  return seeOther(reply, '/');
}

async function accountsPage(
  reply: FastifyReply,
  ctx: AuthContext,
  user: SessionUser,
  message: string | null,
  status = 200,
): Promise<FastifyReply> {
  const users = await listUsers(ctx.db);
  const body = accountsBody(users, user.csrf, message);
  return reply
    .code(status)
    .type(HTML)
    .send(page({ title: 'Accounts', user, section: '/accounts', live: false, body }));
}

async function changeAccounts(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: AuthContext,
  remove: boolean,
): Promise<FastifyReply> {
  const user = userOf(request);
  const form = formOf(request.body);
  const name = form.name ?? '';
  if (remove) {
    if (name === user.name) return accountsPage(reply, ctx, user, 'You cannot remove your own account.', 400);
    await deleteUser(ctx.db, name);
    return accountsPage(reply, ctx, user, `Removed ${name}.`);
  }
  try {
    const [role, password, timeZone] = [form.role ?? '', form.password ?? '', form.timeZone ?? null];
    // A blank password keeps the account's (its role and time zone change). A new one ends the
    // account's sessions with the old password; changing one's own keeps this session.
    if (password === '') await changeAccount(ctx.db, name, role, timeZone);
    else
      await putUser(ctx.db, name, role, password, {
        keepSession: name === user.name ? user.tokenHash : null,
        timeZone,
      });
  } catch (err) {
    if (isQrvendError(err)) return accountsPage(reply, ctx, user, err.message, 400);
    throw err;
  }
  return accountsPage(reply, ctx, user, `Saved ${name}.`);
}

/** /login, /logout and the accounts pages (admins only), with their forms' schemas and checks. */
export function authRoutes(app: FastifyInstance, ctx: AuthContext): void {
  const loginForm = { body: formSchema(['csrf', 'name', 'password']) };
  const accountForm = { body: formSchema(['csrf', 'name', 'role', 'password', 'timeZone']) };
  app.get('/login', { config: { access: 'public' } }, (request, reply) => showLogin(request, reply, ctx, null));
  // The login form's token is checked in login() against the pre-login cookie: there is no session yet.
  app.post('/login', { config: { access: 'public' }, schema: loginForm }, (request, reply) =>
    login(request, reply, ctx),
  );
  app.post('/logout', { config: { csrf: true }, schema: { body: formSchema(['csrf']) } }, async (request, reply) => {
    await endSession(ctx.db, userOf(request).tokenHash);
    reply.setCookie(SESSION_COOKIE, '', cookieOptions(0, ctx.secureCookies));
    return seeOther(reply, '/login');
  });
  app.get('/accounts', { config: { access: 'admin' } }, (request, reply) =>
    accountsPage(reply, ctx, userOf(request), null),
  );
  app.post('/accounts', { config: { access: 'admin', csrf: true }, schema: accountForm }, (request, reply) =>
    changeAccounts(request, reply, ctx, false),
  );
  app.post('/accounts/delete', { config: { access: 'admin', csrf: true }, schema: accountForm }, (request, reply) =>
    changeAccounts(request, reply, ctx, true),
  );
}
