/**
 * The read API's routes (docs/console.md "The API"); ./plugin.ts mounts them under /api/v1 with
 * the token check and the rate limit. Each list is a page by cursor (src/console/store/api-queries.ts);
 * amounts are exact decimal text.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import { adviceFor } from '../web/alarm-advice.js';
import { money } from '../web/html.js';
import { outOfOrderReason } from '../store/page-queries.js';
import {
  alarmsPage,
  auditsPage,
  dailyPage,
  machineRow,
  machinesPage,
  salesPage,
  statusesPage,
  updateVersions,
} from '../store/api-queries.js';
import { feedItem } from '../deliveries/feed-batches.js';
import { readFeed } from '../store/feed-queries.js';
import { rollouts } from '../store/report-queries.js';
import { selectionStates } from '../store/route-queries.js';
import type { ConsoleDatabase, MachinesTable } from '../store/schema.js';
import {
  ALARM,
  AUDIT,
  DAILY,
  ERROR,
  FEED_PAGE,
  MACHINE,
  PAGING,
  ROLLOUT_MACHINE,
  ROLLOUT_VERSION,
  SALE,
  SELECTION,
  STATUS,
  pageOf,
  query,
} from './schemas.js';

type Db = Kysely<ConsoleDatabase>;
type Q = Record<string, string | undefined>;

class BadParameter extends Error {
  statusCode = 400;
}

function limitOf(q: Q): number {
  const n = Number(q.limit ?? '100');
  if (!Number.isSafeInteger(n) || n < 1 || n > 1000) throw new BadParameter('limit: an integer from 1 to 1000');
  return n;
}

function decodeCursor<T>(q: Q, check: (v: unknown) => v is T): T | null {
  if (q.cursor === undefined || q.cursor === '') return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(q.cursor, 'base64url').toString('utf8'));
    if (check(value)) return value;
  } catch {
    // refused below
  }
  throw new BadParameter('cursor: not one this API gave (use nextCursor as it came)');
}

const encode = (key: unknown) => Buffer.from(JSON.stringify(key)).toString('base64url');
const isText = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isTriple = (v: unknown): v is [string, string, string] => Array.isArray(v) && v.length === 3 && v.every(isText);

/** The next cursor: the last row's key when the page is full, else null. */
function next<T>(rows: T[], limit: number, key: (row: T) => unknown): string | null {
  const last = rows[rows.length - 1];
  return rows.length === limit && last !== undefined ? encode(key(last)) : null;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
function period(q: Q) {
  const from = q.from ?? '0000-01-01';
  const to = q.to ?? '9999-12-31';
  for (const [k, v] of [
    ['from', from],
    ['to', to],
  ] as const)
    if (!DAY.test(v)) throw new BadParameter(`${k}: a day YYYY-MM-DD`);
  return { from, to, machine: (q.machine ?? '').slice(0, 128) };
}

const list = (v: string) => (v === '' ? [] : v.split(','));

export function machineJson(m: MachinesTable) {
  return {
    machineId: m.machine_id,
    online: m.online === 1,
    onlineSince: m.online_since ?? null,
    terminalId: m.terminal_id,
    version: m.version,
    reader: m.reader,
    disabledRemotely: m.disabled_remotely === 1,
    gateway: m.gateway,
    outboxPending: Number(m.outbox_pending),
    outboxDead: Number(m.outbox_dead),
    alarms: list(m.alarms),
    updateState: m.update_state,
    updateVersion: m.update_version,
    statusAt: m.status_at,
    seenAt: m.seen_at,
    lastSaleAt: m.last_sale_at,
    outOfOrder: outOfOrderReason(m),
  };
}

const ok = (schema: object, description: string, extra: object = {}) => ({
  description,
  response: { 200: schema, 400: ERROR, 401: ERROR, 429: ERROR },
  config: { access: 'token' as const },
  ...extra,
});

function machineRoutes(app: FastifyInstance, db: Db): void {
  const opts = ok(pageOf(MACHINE, 'Machines in id order'), 'Every machine and its last status', {
    querystring: query(PAGING),
  });
  app.get('/machines', { schema: opts, config: opts.config }, async (request) => {
    const q = request.query as Q;
    const limit = limitOf(q);
    const rows = await machinesPage(db, decodeCursor(q, isText), limit);
    return { items: rows.map(machineJson), nextCursor: next(rows, limit, (r) => r.machine_id) };
  });
  const params = { type: 'object', properties: { machineId: { type: 'string' } }, required: ['machineId'] } as const;
  const one = ok(MACHINE, 'One machine and its last status', {
    params,
    response: { 200: MACHINE, 401: ERROR, 404: ERROR },
  });
  app.get<{ Params: { machineId: string } }>(
    '/machines/:machineId',
    { schema: one, config: one.config },
    async (req, reply) => {
      const m = await machineRow(db, req.params.machineId.slice(0, 128));
      return m === undefined ? notFound(reply, 'machine') : machineJson(m);
    },
  );
  const stock = ok(
    { type: 'array', items: SELECTION },
    "One machine's planogram with each selection's stock level and sales a day",
    { params, response: { 200: { type: 'array', items: SELECTION }, 401: ERROR } },
  );
  app.get<{ Params: { machineId: string } }>(
    '/machines/:machineId/stock',
    { schema: stock, config: stock.config },
    async (req) => {
      const states = await selectionStates(db, [req.params.machineId.slice(0, 128)], Date.now());
      return states.map((s) => ({
        selection: s.selection,
        productCode: s.productCode,
        capacity: s.capacity,
        par: s.par,
        threshold: s.threshold,
        price: money((s as typeof s & { priceMilli: number }).priceMilli),
        level: s.level,
        salesPerDay: s.ratePerDay,
      }));
    },
  );
  const statuses = ok(pageOf(STATUS, 'Status changes, newest first'), 'Each status change the console kept', {
    querystring: query({ machine: 'one machine only', ...PAGING }),
  });
  app.get('/statuses', { schema: statuses, config: statuses.config }, async (request) => {
    const q = request.query as Q;
    const limit = limitOf(q);
    const rows = await statusesPage(db, (q.machine ?? '').slice(0, 128), decodeCursor(q, isNumber), limit);
    const items = rows.map((r) => ({
      id: Number(r.id),
      machineId: r.machine_id,
      receivedAt: r.received_at,
      online: r.online === 1,
      reader: r.reader,
      gateway: r.gateway,
      outboxPending: Number(r.outbox_pending),
      outboxDead: Number(r.outbox_dead),
      version: r.version,
      alarms: list(r.alarms),
    }));
    return { items, nextCursor: next(rows, limit, (r) => Number(r.id)) };
  });
}

function notFound(reply: FastifyReply, what: string) {
  return reply.code(404).send({ error: { code: 'not-found', message: `no such ${what}` } });
}

const PERIOD = { from: 'first day, YYYY-MM-DD (UTC day of the sale)', to: 'last day', machine: 'one machine only' };

function salesRoutes(app: FastifyInstance, db: Db): void {
  const sales = ok(pageOf(SALE, 'Sales in (day, machine, eventId) order'), 'Each sale and cash sale of a period', {
    querystring: query({ ...PERIOD, ...PAGING }),
  });
  app.get('/sales', { schema: sales, config: sales.config }, async (request) => {
    const q = request.query as Q;
    const limit = limitOf(q);
    const rows = await salesPage(db, period(q), decodeCursor(q, isTriple), limit);
    const items = rows.map((s) => ({
      machineId: s.machine_id,
      eventId: s.event_id,
      kind: s.kind,
      day: s.day,
      at: s.at,
      txId: s.tx_id,
      flow: s.flow,
      amount: s.amount,
      currency: s.currency,
      closing: s.closing,
      verdict: s.verdict,
      item: s.item === null ? null : Number(s.item),
    }));
    return { items, nextCursor: next(rows, limit, (r) => [r.day, r.machine_id, r.event_id]) };
  });
  const daily = ok(pageOf(DAILY, 'Machine-days, newest day first'), 'Totals per machine, day and currency (the CSV)', {
    querystring: query({ ...PERIOD, ...PAGING }),
  });
  app.get('/sales/daily', { schema: daily, config: daily.config }, async (request) => {
    const q = request.query as Q;
    const limit = limitOf(q);
    const rows = await dailyPage(db, period(q), decodeCursor(q, isTriple), limit);
    const items = rows.map((d) => ({
      day: d.day,
      machineId: d.machine_id,
      currency: d.currency,
      paidCount: Number(d.paid_count),
      paid: money(d.paid_milli),
      cashCount: Number(d.cash_count),
      cash: money(d.cash_milli),
      cancelledCount: Number(d.cancelled_count),
      deadCount: Number(d.dead_count),
      dead: money(d.dead_milli),
    }));
    return { items, nextCursor: next(rows, limit, (r) => [r.day, r.machine_id, r.currency]) };
  });
}

function reportRoutes(app: FastifyInstance, db: Db): void {
  const alarms = ok(pageOf(ALARM, 'Alarms, newest first'), 'Alarms raised and cleared, with advice', {
    querystring: query({ state: 'open, cleared or all (default)', code: 'one alarm code', ...PAGING }),
  });
  app.get('/alarms', { schema: alarms, config: alarms.config }, async (request) => {
    const q = request.query as Q;
    const limit = limitOf(q);
    const rows = await alarmsPage(db, q.state ?? 'all', (q.code ?? '').slice(0, 64), decodeCursor(q, isNumber), limit);
    const items = rows.map((a) => ({
      id: Number(a.id),
      machineId: a.machine_id,
      code: a.code,
      raisedAt: a.raised_at,
      raisedDetail: a.raised_detail,
      clearedAt: a.cleared_at,
      clearedDetail: a.cleared_detail,
      advice: adviceFor(a.code),
    }));
    return { items, nextCursor: next(rows, limit, (r) => Number(r.id)) };
  });
  const audits = ok(pageOf(AUDIT, 'Audits, newest first'), "Each DEX audit and the machine's reconciliation", {
    querystring: query({ verdict: 'match, mismatch, skipped or unknown', ...PAGING }),
  });
  app.get('/audits', { schema: audits, config: audits.config }, async (request) => {
    const q = request.query as Q;
    const limit = limitOf(q);
    const rows = await auditsPage(db, (q.verdict ?? '').slice(0, 16), decodeCursor(q, isTriple), limit);
    const items = rows.map((a) => ({
      machineId: a.machine_id,
      auditId: a.audit_id,
      eventId: a.event_id,
      at: a.at,
      checkOk: a.check_ok === null ? null : a.check_ok === 1,
      verdict: a.verdict,
      difference: a.difference === null ? null : Number(a.difference),
      message: a.message,
    }));
    return { items, nextCursor: next(rows, limit, (r) => [r.at, r.machine_id, r.audit_id]) };
  });
  const versions = ok({ type: 'array', items: ROLLOUT_VERSION }, 'The versions on offer, newest first');
  app.get('/rollouts', { schema: versions, config: versions.config }, () => updateVersions(db));
  const vparams = { type: 'object', properties: { version: { type: 'string' } }, required: ['version'] } as const;
  const machines = ok({ type: 'array', items: ROLLOUT_MACHINE }, "Each machine's latest state for a version", {
    params: vparams,
    response: { 200: { type: 'array', items: ROLLOUT_MACHINE }, 401: ERROR },
  });
  app.get<{ Params: { version: string } }>(
    '/rollouts/:version',
    { schema: machines, config: machines.config },
    async (req) => {
      const r = await rollouts(db, req.params.version.slice(0, 64));
      return r.machines.map((m) => ({
        machineId: m.machine_id,
        state: m.state,
        at: m.at,
        running: m.running,
        detail: m.detail,
        rolloutId: m.rollout_id,
      }));
    },
  );
}

function feedRoute(app: FastifyInstance, db: Db): void {
  const feed = ok(FEED_PAGE, "Every stored event after a position, in the order stored (the webhooks' feed)", {
    querystring: query({ after: 'a position (0: from the first event)', limit: PAGING.limit }),
  });
  app.get('/events', { schema: feed, config: feed.config }, async (request) => {
    const q = request.query as Q;
    const after = Number(q.after ?? '0');
    if (!Number.isSafeInteger(after) || after < 0) throw new BadParameter('after: a position, 0 or more');
    const entries = await readFeed(db, after, limitOf(q));
    const events = entries.map(feedItem);
    return { events, cursor: entries[entries.length - 1]?.position ?? after };
  });
}

export function apiRoutes(app: FastifyInstance, db: Db): void {
  machineRoutes(app, db);
  salesRoutes(app, db);
  reportRoutes(app, db);
  feedRoute(app, db);
}
