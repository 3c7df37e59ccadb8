/**
 * The pages of the console's reach: Alerts (./alert-routes.ts), and for admins Webhooks (add an
 * endpoint after checking its URL with a signed test message; its delivery log; enable, disable,
 * a new secret, delete) and API tokens (made, shown once, revoked). docs/console.md.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { isQrvendError } from '../../core/errors.js';
import { checkReceiverUrl } from '../deliveries/receiver-address.js';
import { newMessageId, newWebhookSecret, webhookHeaders } from '../deliveries/signing.js';
import { postWebhook, type PostOptions } from '../deliveries/webhook-post.js';
import { feedHead } from '../store/feed-queries.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { createToken, listTokens, revokeToken } from '../store/token-queries.js';
import {
  addEndpoint,
  deleteEndpoint,
  disableEndpoint,
  enableEndpoint,
  endpointLog,
  findEndpoint,
  listEndpoints,
  rotateSecret,
} from '../store/webhook-queries.js';
import { alertRoutes } from './alert-routes.js';
import { userOf } from './guard.js';
import { html, type Html } from './html.js';
import { formOf, formSchema, plain, seeOther } from './http-kit.js';
import { endpointBody, note, shownOnce, tokensBody, webhooksBody } from './pages/webhooks.js';
import { show } from './routes.js';

type Db = Kysely<ConsoleDatabase>;

export interface ReachWeb {
  post: PostOptions;
  emailConfigured: boolean;
  defaultZone: string;
  /** Something was queued: the delivery worker looks now. */
  nudge(): void;
}

const ADMIN = { access: 'admin' } as const;
const ADMIN_FORM = { access: 'admin', csrf: true } as const;
const idParams = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } as const;

/** The check when an endpoint is added: the URL's rules, then a signed test message answered 2xx within 5 s. */
async function checkNewReceiver(url: string, secret: string, post: PostOptions): Promise<string | null> {
  try {
    checkReceiverUrl(url, post.policy);
  } catch (err) {
    if (isQrvendError(err)) return err.message;
    throw err;
  }
  const id = newMessageId();
  const now = Date.now();
  const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date(now).toISOString(), data: {} });
  const result = await postWebhook(url, webhookHeaders(secret, id, Math.floor(now / 1000), body), body, {
    ...post,
    timeoutMs: Math.min(post.timeoutMs, 5000),
  });
  return result.ok ? null : `the test message failed: ${result.error ?? `status ${result.status}`}`;
}

async function webhooksPage(reply: FastifyReply, db: Db, request: FastifyRequest, message: Html | null, status = 200) {
  const user = userOf(request);
  const body = webhooksBody(await listEndpoints(db), await feedHead(db), user.csrf, message);
  return show(reply, user, 'Webhooks', '/webhooks', body, status);
}

async function endpointPage(reply: FastifyReply, db: Db, request: FastifyRequest, id: number, message: Html | null) {
  const endpoint = await findEndpoint(db, id);
  if (endpoint === null) return plain(reply, 404, 'no such endpoint\n');
  const log = await endpointLog(db, id);
  const view = {
    endpoint,
    head: await feedHead(db),
    csrf: userOf(request).csrf,
    log: {
      deliveries: log.deliveries.map((d) => ({
        ...d,
        created_ms: Number(d.created_ms),
        next_ms: Number(d.next_ms),
        feed_from: d.feed_from === null ? null : Number(d.feed_from),
        feed_to: d.feed_to === null ? null : Number(d.feed_to),
      })),
      attempts: log.attempts.map((a) => ({ ...a, at_ms: Number(a.at_ms) })),
    },
    message,
  };
  return show(reply, userOf(request), `Webhook endpoint ${id}`, '/webhooks', endpointBody(view));
}

function webhookRoutes(app: FastifyInstance, db: Db, reach: ReachWeb): void {
  app.get('/webhooks', { config: ADMIN }, (request, reply) => webhooksPage(reply, db, request, null));
  const addForm = { body: formSchema(['csrf', 'url', 'events', 'alerts', 'from']) };
  app.post('/webhooks', { config: ADMIN_FORM, schema: addForm }, async (request, reply) => {
    const form = formOf(request.body);
    const url = (form.url ?? '').trim();
    const secret = newWebhookSecret();
    const refused = await checkNewReceiver(url, secret, reach.post);
    if (refused !== null) return webhooksPage(reply, db, request, note(`Not added: ${refused}`, true), 400);
    const id = await addEndpoint(
      db,
      {
        owner: userOf(request).name,
        url,
        secret,
        events: form.events === 'on',
        alerts: form.alerts === 'on',
        from: form.from === 'beginning' ? 'beginning' : 'now',
      },
      new Date().toISOString(),
    );
    reach.nudge();
    return endpointPage(reply, db, request, id, shownOnce(`Endpoint ${id} added. Its signing secret`, secret));
  });
  app.get<{ Params: { id: number } }>(
    '/webhooks/:id',
    { config: ADMIN, schema: { params: idParams } },
    (request, reply) => endpointPage(reply, db, request, request.params.id, null),
  );
  const actionForm = { body: formSchema(['csrf']), params: idParams };
  for (const action of ['enable', 'disable', 'rotate', 'delete'] as const) {
    app.post<{ Params: { id: number } }>(
      `/webhooks/:id/${action}`,
      { config: ADMIN_FORM, schema: actionForm },
      async (request, reply) => {
        const id = request.params.id;
        if ((await findEndpoint(db, id)) === null) return plain(reply, 404, 'no such endpoint\n');
        if (action === 'delete') {
          await deleteEndpoint(db, id);
          return seeOther(reply, '/webhooks');
        }
        if (action === 'rotate') {
          const secret = newWebhookSecret();
          await rotateSecret(db, id, secret);
          return endpointPage(reply, db, request, id, shownOnce('The new signing secret', secret));
        }
        if (action === 'enable') await enableEndpoint(db, id, Date.now());
        else await disableEndpoint(db, id, `disabled by ${userOf(request).name}`);
        reach.nudge();
        return endpointPage(reply, db, request, id, note(`Endpoint ${action}d.`, false));
      },
    );
  }
}

function tokenRoutes(app: FastifyInstance, db: Db): void {
  const page = async (request: FastifyRequest, reply: FastifyReply, message: Html | null) => {
    const user = userOf(request);
    return show(reply, user, 'API tokens', '/api-tokens', tokensBody(await listTokens(db), user.csrf, message));
  };
  app.get('/api-tokens', { config: ADMIN }, (request, reply) => page(request, reply, null));
  app.post(
    '/api-tokens',
    { config: ADMIN_FORM, schema: { body: formSchema(['csrf', 'name']) } },
    async (request, reply) => {
      const name = (formOf(request.body).name ?? '').trim();
      if (name === '') return page(request, reply, note('Not made: give the token a name.', true));
      const token = await createToken(db, name, userOf(request).name, new Date().toISOString());
      return page(request, reply, html`${shownOnce(`Token "${name}"`, token)}`);
    },
  );
  app.post<{ Params: { id: number } }>(
    '/api-tokens/:id/revoke',
    { config: ADMIN_FORM, schema: { body: formSchema(['csrf']), params: idParams } },
    async (request, reply) => {
      await revokeToken(db, request.params.id, new Date().toISOString());
      return page(request, reply, note('Token revoked: it is refused from now on.', false));
    },
  );
}

/** Registers the Alerts, Webhooks and API tokens pages (without a reach, the defaults of a console without e-mail). */
export function reachRoutes(app: FastifyInstance, db: Db, reach: ReachWeb | null): void {
  const r: ReachWeb = reach ?? {
    post: { policy: { allowPrivate: false }, timeoutMs: 15_000, ca: null },
    emailConfigured: false,
    defaultZone: 'UTC',
    nudge: () => undefined,
  };
  alertRoutes(app, { db, emailConfigured: r.emailConfigured, defaultZone: r.defaultZone });
  webhookRoutes(app, db, r);
  tokenRoutes(app, db);
}
