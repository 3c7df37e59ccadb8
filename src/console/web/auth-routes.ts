/**
 * Logging in and out, and the accounts page. Login: a CSRF token bound to a pre-login cookie
 * (double submit), limits per address and per account counted in the database before the
 * password is checked (so every instance sees them, and a burst cannot outrun them), scrypt
 * checked even for an unknown account (same time either way).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
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
import { clientAddress, cookie, crossOrigin, parseCookies, readForm, redirect, sameText, send } from './http-kit.js';
import { page } from './html.js';
import { accountsBody, loginBody } from './pages/accounts.js';

export const SESSION_COOKIE = 'qrc_session';
const LOGIN_COOKIE = 'qrc_login';

export interface AuthContext {
  db: Kysely<ConsoleDatabase>;
  secureCookies: boolean;
  behindProxy: boolean;
  sessionMs: number;
  loginFailures: number;
  loginWindowMs: number;
}

const HTML = 'text/html; charset=utf-8';

export function showLogin(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: AuthContext,
  error: string | null,
  status = 200,
): void {
  // One token per browser, kept while it lives: a second login page (another tab, a redirected
  // request) must not invalidate the form already shown.
  const held = parseCookies(req.headers.cookie).get(LOGIN_COOKIE) ?? '';
  const token = /^[A-Za-z0-9_-]{32}$/.test(held) ? held : randomBytes(24).toString('base64url');
  const body = page({ title: 'Log in', user: null, section: '', live: false, body: loginBody(token, error) });
  send(res, status, HTML, body, { 'Set-Cookie': cookie(LOGIN_COOKIE, token, 3600, ctx.secureCookies) });
}

export async function login(req: IncomingMessage, res: ServerResponse, ctx: AuthContext): Promise<void> {
  const form = await readForm(req);
  const pre = parseCookies(req.headers.cookie).get(LOGIN_COOKIE) ?? '';
  if (form === null || crossOrigin(req) || !sameText(form.get('csrf') ?? '', pre)) {
    return showLogin(req, res, ctx, 'The form expired: log in again.', 403);
  }
  const name = (form.get('name') ?? '').slice(0, 64);
  const password = form.get('password') ?? '';
  const addressKey = `addr:${clientAddress(req, ctx.behindProxy)}`;
  const accountKey = `user:${name.toLowerCase()}`;
  // Counted before the password is checked (docs/console.md "Security choices"): a burst of
  // guesses sent at once is checked no further than the limit.
  if (!(await reserveLoginAttempt(ctx.db, [addressKey, accountKey], ctx.loginFailures, ctx.loginWindowMs))) {
    return showLogin(req, res, ctx, 'Too many failed logins: wait a few minutes and try again.', 429);
  }
  const user = await findUser(ctx.db, name);
  const ok = await verifyPassword(password, user?.password_hash ?? (await decoyHash()));
  if (user === undefined || !ok) return showLogin(req, res, ctx, 'Wrong account or password.', 401);
  await loginSucceeded(ctx.db, addressKey, accountKey);
  const session = await createSession(ctx.db, user.name, ctx.sessionMs);
  redirect(res, '/', [
    cookie(SESSION_COOKIE, session.token, Math.floor(ctx.sessionMs / 1000), ctx.secureCookies),
    cookie(LOGIN_COOKIE, '', 0, ctx.secureCookies),
  ]);
}

/** The form of a logged-in user, or null (answered 403) when it is cross-site or its CSRF token is wrong. */
export async function checkedForm(
  req: IncomingMessage,
  res: ServerResponse,
  user: SessionUser,
): Promise<URLSearchParams | null> {
  const form = await readForm(req);
  if (form === null || crossOrigin(req) || !sameText(form.get('csrf') ?? '', user.csrf)) {
    send(
      res,
      403,
      'text/plain; charset=utf-8',
      'refused: this form is stale or came from another site; reload the page\n',
    );
    return null;
  }
  return form;
}

export async function logout(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: AuthContext,
  user: SessionUser,
): Promise<void> {
  if ((await checkedForm(req, res, user)) === null) return;
  await endSession(ctx.db, user.tokenHash);
  redirect(res, '/login', [cookie(SESSION_COOKIE, '', 0, ctx.secureCookies)]);
}

export async function accountsPage(
  res: ServerResponse,
  ctx: AuthContext,
  user: SessionUser,
  message: string | null,
  status = 200,
): Promise<void> {
  const users = await listUsers(ctx.db);
  send(
    res,
    status,
    HTML,
    page({ title: 'Accounts', user, section: '/accounts', live: false, body: accountsBody(users, user.csrf, message) }),
  );
}

export async function changeAccounts(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: AuthContext,
  user: SessionUser,
  remove: boolean,
): Promise<void> {
  const form = await checkedForm(req, res, user);
  if (form === null) return;
  const name = form.get('name') ?? '';
  if (remove) {
    if (name === user.name) return accountsPage(res, ctx, user, 'You cannot remove your own account.', 400);
    await deleteUser(ctx.db, name);
    return accountsPage(res, ctx, user, `Removed ${name}.`);
  }
  try {
    const [role, password, timeZone] = [form.get('role') ?? '', form.get('password') ?? '', form.get('timeZone')];
    // A blank password keeps the account's (its role and time zone change). A new one ends the
    // account's sessions with the old password; changing one's own keeps this session.
    if (password === '') await changeAccount(ctx.db, name, role, timeZone);
    else
      await putUser(ctx.db, name, role, password, {
        keepSession: name === user.name ? user.tokenHash : null,
        timeZone,
      });
  } catch (err) {
    if (isQrvendError(err)) return accountsPage(res, ctx, user, err.message, 400);
    throw err;
  }
  return accountsPage(res, ctx, user, `Saved ${name}.`);
}
