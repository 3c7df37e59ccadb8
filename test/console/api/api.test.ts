/**
 * The read API (/api/v1) against its own OpenAPI 3.1 document: every documented route is asked
 * with a real token and its real answer validated (ajv, JSON Schema 2020-12) against the
 * document's schema for it; every API route is documented; pages by cursor cover each row once;
 * the daily totals are the CSV's figures; a token is shown once, stored hashed, refused once
 * revoked; the request limit is counted across two instances on one database.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { silentLogger } from '../../../src/core/log.js';
import type { FleetEvent } from '../../../src/fleet/contract/index.js';
import { putUser } from '../../../src/console/store/accounts.js';
import { storeEventBatch } from '../../../src/console/store/event-batch.js';
import { storeStatus } from '../../../src/console/store/ingest-queries.js';
import { salesByMachineDay } from '../../../src/console/store/report-queries.js';
import { startWeb, type ConsoleWeb } from '../../../src/console/web/server.js';
import { money } from '../../../src/console/web/html.js';
import { openTestStore, type TestStore } from '../support/store.js';
import { WebClient } from '../support/web-client.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

function web(store: TestStore, requestsPerMinute = 1000): Promise<ConsoleWeb> {
  return startWeb({
    db: store.db,
    log: silentLogger(),
    listen: { host: '127.0.0.1', port: 0 },
    tls: null,
    transport: 'loopback',
    behindTlsProxy: false,
    sessionHours: 1,
    login: { failures: 5, windowS: 900 },
    pageSize: 50,
    apiRequestsPerMinute: requestsPerMinute,
  });
}

const ev = (e: Record<string, unknown>) => {
  const event = e as FleetEvent;
  return { machineId: event.machineId, event, receivedAt: event.at, raw: JSON.stringify(event) };
};

async function seed(store: TestStore): Promise<void> {
  const events = [];
  for (const [i, m, day, amount] of [
    [1, 'M-1', '2026-12-01', '1.50'],
    [2, 'M-2', '2026-12-01', '2.25'],
    [3, 'M-1', '2026-12-02', '0.99'],
    [4, 'M-1', '2026-12-02', '3.10'],
    [5, 'M-2', '2026-12-03', '1.00'],
  ] as const) {
    events.push(
      ev({
        kind: 'sale',
        eventId: `s${i}`,
        at: `${day}T10:00:0${i}.000Z`,
        machineId: m,
        txId: `tx${i}`,
        flow: 'static',
        amount,
        currency: 'EUR',
        products: [{ item: 4, price: amount, outcome: 'success' }],
        closing: 'settlement',
        verdict: i === 5 ? 'dead-letter' : 'accepted',
      }),
    );
  }
  events.push(
    ev({
      kind: 'cash-sale',
      eventId: 'c1',
      at: '2026-12-02T11:00:00.000Z',
      machineId: 'M-2',
      item: 7,
      price: '1.20',
      currency: 'EUR',
    }),
  );
  events.push(
    ev({
      kind: 'alarm',
      eventId: 'a1',
      at: '2026-12-02T12:00:00.000Z',
      machineId: 'M-1',
      code: 'BOARD_SILENT',
      state: 'raised',
      detail: 'x',
    }),
  );
  events.push(
    ev({
      kind: 'audit',
      eventId: 'd1',
      at: '2026-12-02T13:00:00.000Z',
      machineId: 'M-1',
      auditId: 'au1',
      part: 0,
      parts: 1,
      raw: '',
      summary: { check: { ok: true }, reconciliation: { status: 'mismatch', difference: 2, message: 'two more' } },
    }),
  );
  events.push(
    ev({
      kind: 'update',
      eventId: 'u1',
      at: '2026-12-02T14:00:00.000Z',
      machineId: 'M-2',
      version: '1.5.0',
      running: '1.4.0',
      state: 'downloading',
      rolloutId: null,
      progress: null,
      detail: null,
    }),
  );
  await storeEventBatch(store.db, events);
  await storeStatus(store.db, 'M-1', { online: false }, '2026-12-02T15:00:00.000Z');
}

async function tokenFrom(client: WebClient, name: string): Promise<string> {
  const page = await client.request('/api-tokens');
  const made = await client.request('/api-tokens', { form: { csrf: WebClient.csrfOf(page.text), name } });
  const m = /<pre id="shown-once">(qrv_[A-Za-z0-9_-]+)<\/pre>/.exec(made.text);
  assert.ok(m, 'the token is shown once');
  const again = await client.request('/api-tokens');
  assert.equal(again.text.includes(m[1]!), false, 'and never again');
  return m[1]!;
}

type Doc = {
  openapi: string;
  paths: Record<
    string,
    {
      get: {
        responses: Record<string, { content: Record<string, { schema: object }> }>;
        parameters?: { in: string; name: string }[];
      };
    }
  >;
};

test('every documented route answers what the OpenAPI document says, with a real token', T, async () => {
  const store = await openTestStore('sqlite');
  const console1 = await web(store);
  try {
    await seed(store);
    await putUser(store.db, 'admin1', 'admin', 'admin-password-1');
    const admin = new WebClient(console1.url);
    await admin.login('admin1', 'admin-password-1');
    const token = await tokenFrom(admin, 'erp');
    const stored = await store.db.selectFrom('api_tokens').selectAll().executeTakeFirstOrThrow();
    assert.equal(stored.token_hash, createHash('sha256').update(token).digest('hex'));
    const api = new WebClient(console1.url);
    const auth = { authorization: `Bearer ${token}` };
    const docAnswer = await api.request('/api/v1/openapi.json');
    assert.equal(docAnswer.status, 200);
    const doc = JSON.parse(docAnswer.text) as Doc;
    assert.equal(doc.openapi, '3.1.0');
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const paramValues: Record<string, string> = { machineId: 'M-1', version: '1.5.0' };
    const asked = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      const url = '/api/v1' + path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(paramValues[name]!));
      const answer = await api.request(url, { headers: auth });
      assert.equal(answer.status, 200, `${url}: ${answer.text}`);
      const schema = item.get.responses['200']!.content['application/json']!.schema;
      const validate = ajv.compile(schema);
      const body: unknown = JSON.parse(answer.text);
      assert.ok(validate(body), `${url}: ${JSON.stringify(validate.errors)}`);
      asked.add(path);
      const unauthorized = await api.request(url);
      assert.equal(unauthorized.status, 401);
      const errorSchema = item.get.responses['401']!.content['application/json']!.schema;
      assert.ok(ajv.validate(errorSchema, JSON.parse(unauthorized.text)), url);
    }
    const expected = [
      '/machines',
      '/machines/{machineId}',
      '/machines/{machineId}/stock',
      '/statuses',
      '/sales',
      '/sales/daily',
      '/alarms',
      '/audits',
      '/rollouts',
      '/rollouts/{version}',
      '/events',
    ];
    assert.deepEqual([...asked].sort(), expected.sort(), 'every API route is documented, and only those');
    const bad = await api.request('/api/v1/sales?cursor=garbage', { headers: auth });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /cursor: not one this API gave/);
    assert.equal((await api.request('/api/v1/nothing', { headers: auth })).status, 404);
  } finally {
    await console1.close();
    await store.remove();
  }
});

test(
  'pages by cursor cover each row once; the daily totals are the CSV figures; a revoked token is refused',
  T,
  async () => {
    const store = await openTestStore('sqlite');
    const console1 = await web(store);
    try {
      await seed(store);
      await putUser(store.db, 'admin1', 'admin', 'admin-password-1');
      const admin = new WebClient(console1.url);
      await admin.login('admin1', 'admin-password-1');
      const token = await tokenFrom(admin, 'bi');
      const auth = { authorization: `Bearer ${token}` };
      const all = async (path: string) => {
        const items: Record<string, unknown>[] = [];
        let cursor: string | null = '';
        while (cursor !== null) {
          const r = await admin.request(`${path}${path.includes('?') ? '&' : '?'}limit=2&cursor=${cursor}`, {
            headers: auth,
          });
          const page = JSON.parse(r.text) as { items: Record<string, unknown>[]; nextCursor: string | null };
          items.push(...page.items);
          cursor = page.nextCursor;
        }
        return items;
      };
      const sales = await all('/api/v1/sales?from=2026-12-01&to=2026-12-31');
      assert.deepEqual(
        sales.map((s) => s.eventId),
        ['s1', 's2', 's3', 's4', 'c1', 's5'],
      );
      const daily = await all('/api/v1/sales/daily?from=2026-12-01&to=2026-12-31');
      const csv = await salesByMachineDay(
        store.db,
        { from: '2026-12-01', to: '2026-12-31', machine: '', page: 1, pageSize: 100 },
        true,
      );
      assert.deepEqual(
        daily.map((d) => [
          d.day,
          d.machineId,
          d.currency,
          d.paidCount,
          d.paid,
          d.cashCount,
          d.cash,
          d.cancelledCount,
          d.deadCount,
        ]),
        csv.rows.map((r) => [
          r.day,
          r.machineId,
          r.currency,
          r.paidCount,
          money(r.paidMilli),
          r.cashCount,
          money(r.cashMilli),
          r.cancelledCount,
          r.deadCount,
        ]),
      );
      assert.equal(daily.find((d) => d.day === '2026-12-02' && d.machineId === 'M-1')!.paid, '4.09');
      const feed = JSON.parse((await admin.request('/api/v1/events?after=2&limit=3', { headers: auth })).text);
      assert.deepEqual(
        feed.events.map((e: { position: number }) => e.position),
        [3, 4, 5],
      );
      assert.equal(feed.cursor, 5);
      const tokens = await admin.request('/api-tokens');
      const id = /action="\/api-tokens\/(\d+)\/revoke"/.exec(tokens.text)![1];
      await admin.request(`/api-tokens/${id}/revoke`, { form: { csrf: WebClient.csrfOf(tokens.text) } });
      assert.equal((await admin.request('/api/v1/machines', { headers: auth })).status, 401);
    } finally {
      await console1.close();
      await store.remove();
    }
  },
);

test('the request limit per token holds across two instances on one database', T, async () => {
  const store = await openTestStore('sqlite');
  const a = await web(store, 3);
  const b = await web(store, 3);
  try {
    await putUser(store.db, 'admin1', 'admin', 'admin-password-1');
    const admin = new WebClient(a.url);
    await admin.login('admin1', 'admin-password-1');
    const auth = { authorization: `Bearer ${await tokenFrom(admin, 'loop')}` };
    const statuses = [];
    for (const base of [a.url, b.url, a.url, b.url])
      statuses.push((await new WebClient(base).request('/api/v1/machines', { headers: auth })).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    const limited = await new WebClient(a.url).request('/api/v1/machines', { headers: auth });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.match(limited.text, /"code":"rate-limited"/);
  } finally {
    await a.close();
    await b.close();
    await store.remove();
  }
});
