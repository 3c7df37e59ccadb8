/**
 * The Alerts pages (docs/console.md "Alert rules"): an account's rules, its e-mail address and its
 * last notifications. A viewer sees and changes their own; an admin anyone's (`owner`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { RULE_FORM_FIELDS, RuleFormError, ruleFields } from '../alerts/rule-form.js';
import type { SessionUser } from '../store/accounts.js';
import {
  addRule,
  deleteRule,
  emailOf,
  findRule,
  listRules,
  notificationsOf,
  setEmail,
  updateRule,
} from '../store/alert-queries.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { listEndpoints } from '../store/webhook-queries.js';
import { userOf } from './guard.js';
import { formOf, formSchema, plain, querySchema, queryParams, seeOther } from './http-kit.js';
import { alertsBody } from './pages/alerts.js';
import { show } from './routes.js';

type Db = Kysely<ConsoleDatabase>;

export interface AlertPagesContext {
  db: Db;
  emailConfigured: boolean;
  /** The zone a new rule starts with. */
  defaultZone: string;
}

/** Whose rules: one's own, or (admins) the account named. Null when a viewer names another. */
function ownerOf(user: SessionUser, named: string | undefined): string | null {
  const owner = named === undefined || named === '' ? user.name : named.slice(0, 64);
  return owner === user.name || user.role === 'admin' ? owner : null;
}

async function render(
  reply: FastifyReply,
  ctx: AlertPagesContext,
  user: SessionUser,
  owner: string,
  extra: { editing?: number; message?: string; error?: boolean; status?: number } = {},
) {
  const [rules, endpoints, email, notifications] = await Promise.all([
    listRules(ctx.db, owner),
    listEndpoints(ctx.db),
    emailOf(ctx.db, owner),
    notificationsOf(ctx.db, owner),
  ]);
  const owners =
    user.role === 'admin'
      ? (await ctx.db.selectFrom('users').select('name').orderBy('name').execute()).map((u) => u.name)
      : null;
  const editing = extra.editing === undefined ? null : (rules.find((r) => r.id === extra.editing) ?? null);
  const body = alertsBody({
    owner,
    csrf: user.csrf,
    owners,
    email,
    emailConfigured: ctx.emailConfigured,
    rules,
    endpoints: endpoints.filter((e) => e.alerts === 1).map((e) => ({ id: e.id, url: e.url })),
    notifications: notifications.map((n) => ({ ...n, created_ms: Number(n.created_ms) })),
    editing,
    defaultZone: user.timeZone,
    message: extra.message ?? null,
    error: extra.error === true,
  });
  return show(reply, user, 'Alerts', '/alerts', body, extra.status ?? 200);
}

const notYours = (reply: FastifyReply) => plain(reply, 403, "an account's rules are changed by itself or an admin\n");

async function saveRule(request: FastifyRequest, reply: FastifyReply, ctx: AlertPagesContext, id: number | null) {
  const user = userOf(request);
  const form = formOf(request.body);
  const owner = ownerOf(user, form.owner);
  if (owner === null) return notYours(reply);
  if (id !== null) {
    const rule = await findRule(ctx.db, id);
    if (rule === null || rule.owner !== owner) return plain(reply, 404, 'no such rule\n');
  }
  const endpoints = (await listEndpoints(ctx.db)).filter((e) => e.alerts === 1).map((e) => e.id);
  try {
    const fields = ruleFields(form, endpoints);
    const now = new Date().toISOString();
    if (id === null) await addRule(ctx.db, owner, fields, now);
    else await updateRule(ctx.db, id, fields, now);
  } catch (err) {
    if (!(err instanceof RuleFormError)) throw err;
    return render(reply, ctx, user, owner, { message: `Not saved: ${err.message}`, error: true, status: 400 });
  }
  return seeOther(reply, `/alerts?owner=${encodeURIComponent(owner)}`);
}

const idParams = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } as const;
const RULE_FORM = { body: formSchema(RULE_FORM_FIELDS) };

export function alertRoutes(app: FastifyInstance, ctx: AlertPagesContext): void {
  const ownerQuery = { querystring: querySchema(['owner']) };
  app.get('/alerts', { schema: ownerQuery }, async (request, reply) => {
    const user = userOf(request);
    const owner = ownerOf(user, queryParams(request.query).get('owner') ?? undefined);
    return owner === null ? notYours(reply) : render(reply, ctx, user, owner);
  });
  app.get<{ Params: { id: number } }>(
    '/alerts/:id',
    { schema: { ...ownerQuery, params: idParams } },
    async (request, reply) => {
      const user = userOf(request);
      const rule = await findRule(ctx.db, request.params.id);
      if (rule === null || ownerOf(user, rule.owner) === null) return plain(reply, 404, 'no such rule\n');
      return render(reply, ctx, user, rule.owner, { editing: rule.id });
    },
  );
  app.post('/alerts', { config: { csrf: true }, schema: RULE_FORM }, (request, reply) =>
    saveRule(request, reply, ctx, null),
  );
  app.post<{ Params: { id: number } }>(
    '/alerts/:id',
    { config: { csrf: true }, schema: { ...RULE_FORM, params: idParams } },
    (request, reply) => saveRule(request, reply, ctx, request.params.id),
  );
  app.post<{ Params: { id: number } }>(
    '/alerts/:id/delete',
    { config: { csrf: true }, schema: { body: formSchema(['csrf', 'owner']), params: idParams } },
    async (request, reply) => {
      const user = userOf(request);
      const rule = await findRule(ctx.db, request.params.id);
      if (rule === null || ownerOf(user, rule.owner) === null) return plain(reply, 404, 'no such rule\n');
      await deleteRule(ctx.db, rule.id);
      return seeOther(reply, `/alerts?owner=${encodeURIComponent(rule.owner)}`);
    },
  );
  app.post(
    '/alerts/email',
    { config: { csrf: true }, schema: { body: formSchema(['csrf', 'owner', 'email']) } },
    async (request, reply) => {
      const user = userOf(request);
      const form = formOf(request.body);
      const owner = ownerOf(user, form.owner);
      if (owner === null) return notYours(reply);
      const email = (form.email ?? '').trim();
      if (email !== '' && !/^[^\s@<>,;"]{1,64}@[A-Za-z0-9.-]{1,189}\.[A-Za-z]{2,}$/.test(email)) {
        return render(reply, ctx, user, owner, {
          message: 'Not saved: email: an address such as name@example.com',
          error: true,
          status: 400,
        });
      }
      await setEmail(ctx.db, owner, email === '' ? null : email);
      return render(reply, ctx, user, owner, {
        message: email === '' ? 'No e-mail for this account.' : `Alerts go to ${email}.`,
      });
    },
  );
}
