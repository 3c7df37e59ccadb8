/**
 * The route's pages over HTTP (the real server on loopback, a SQLite store): who may change what
 * (a viewer reads, a planner imports, edits, applies, records fills, prepares catalogs), a bad
 * import refused whole naming its lines and columns, a large import past the 16 KiB form limit,
 * a fill above capacity refused and a fill to par kept, the pick list's CSV and the export equal to
 * what the store says, a catalog push's documents, machine-named text escaped.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../../src/core/log.js';
import { putUser } from '../../../src/console/store/accounts.js';
import { readPlanogramSet } from '../../../src/console/store/planogram-reads.js';
import { routeDay } from '../../../src/console/store/route-store.js';
import { productList } from '../../../src/console/store/planogram-reads.js';
import { writePlanogramCsv } from '../../../src/console/route/planogram-file.js';
import { pickListCsv } from '../../../src/console/web/pages/pick-list.js';
import { dayParam } from '../../../src/console/web/pages/route-kit.js';
import { startWeb, type ConsoleWeb } from '../../../src/console/web/server.js';
import { openTestStore, type TestStore } from '../support/store.js';
import { WebClient } from '../support/web-client.js';

const PLAN = [
  'template,model,machine,selection,product,name,names,capacity,par,threshold,price',
  'T-2,Tower <2>,,1,WATER,"<script>alert(1)</script>",de=Wasser,10,8,2,1.50',
  'T-2,,,2,COLA,Cola,,10,8,8,2.00',
].join('\n');

async function withConsole(run: (web: ConsoleWeb, store: TestStore) => Promise<void>) {
  const store = await openTestStore('sqlite');
  const web = await startWeb({
    db: store.db,
    log: silentLogger(),
    listen: { host: '127.0.0.1', port: 0 },
    tls: null,
    transport: 'loopback',
    behindTlsProxy: false,
    sessionHours: 1,
    login: { failures: 10, windowS: 900 },
    pageSize: 50,
  });
  try {
    await putUser(store.db, 'planner1', 'planner', 'planner-password-1');
    await putUser(store.db, 'viewer1', 'viewer', 'viewer-password-1');
    await run(web, store);
  } finally {
    await web.close();
    await store.remove();
  }
}

async function as(web: ConsoleWeb, name: string, password: string) {
  const c = new WebClient(web.url);
  assert.equal((await c.login(name, password)).status, 303);
  const csrf = WebClient.csrfOf((await c.request('/planograms')).text);
  return { c, csrf };
}

test('a viewer reads the route pages and changes nothing', { timeout: 60_000 }, async () => {
  await withConsole(async (web) => {
    const { c, csrf } = await as(web, 'viewer1', 'viewer-password-1');
    for (const path of ['/planograms', '/stock', '/routes', '/catalog', '/prices'])
      assert.equal((await c.request(path)).status, 200, path);
    const page = (await c.request('/planograms')).text;
    assert.doesNotMatch(page, /id="import-form"/, 'no import form for a viewer');
    const refused = await c.request('/planograms/import', { form: { csrf, format: 'csv', text: PLAN } });
    assert.equal(refused.status, 403);
    assert.match(refused.text, /planner or an admin/);
    assert.equal((await c.request('/catalog/prepare', { form: { csrf, scope: '*' } })).status, 403);
  });
});

test(
  'a planner imports (a bad file refused whole), applies, fills, and gets the pick list',
  { timeout: 60_000 },
  async () => {
    await withConsole(async (web, store) => {
      const { c, csrf } = await as(web, 'planner1', 'planner-password-1');
      const bad = `${PLAN}\nT-2,,,3,JUICE,,,10,8,2,1.00\nT-2,,,4,COLA,,,10,12,2,1.00\nT-2,,M 1,,,,,,,,`;
      const refused = await c.request('/planograms/import', { form: { csrf, format: 'csv', text: bad } });
      assert.equal(refused.status, 400);
      assert.match(refused.text, /Nothing was imported: 3 problems/);
      assert.match(refused.text, /line 5, column par<\/strong>: the par level 12 is above the capacity 10/);
      assert.match(refused.text, /line 6, column machine<\/strong>/);
      assert.match(refused.text, /line 4, column product<\/strong>: product JUICE is not defined/);
      assert.equal((await readPlanogramSet(store.db)).templates.length, 0, 'nothing half-imported');

      // 20 KiB of CSV: past the 16 KiB of the other forms, within the import's own limit.
      const many = Array.from({ length: 600 }, (_, i) => `T-BIG,,,${i + 10},COLA,,,10,8,2,2.00`).join('\n');
      const big = `${PLAN}\n${many}\n`;
      assert.ok(Buffer.byteLength(big) > 16 * 1024);
      const ok = await c.request('/planograms/import', { form: { csrf, format: 'csv', text: big } });
      assert.equal(ok.status, 200, ok.text.slice(0, 300));
      assert.match(ok.text, /Imported 2 products, 2 templates, 0 machines/);
      assert.doesNotMatch(ok.text, /<script>alert/, 'a name is escaped');
      assert.match(ok.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);

      const applied = await c.request('/planograms/templates/T-2/apply', { form: { csrf, machines: 'M1, M2' } });
      assert.match(applied.text, /Applied T-2 to 2 machines/);
      const over = await c.request('/visit/M1', { form: { csrf, mode: 'counts', c1: '11', c2: '-1', note: '' } });
      assert.equal(over.status, 400);
      assert.match(
        over.text,
        /selection 1: 11 is more than its capacity of 10; selection 2: the count must be a whole/,
      );
      assert.equal((await c.request('/visit/M1', { form: { csrf, mode: 'par', note: 'first fill' } })).status, 303);
      const stock = await c.request('/stock/M1');
      assert.match(stock.text, /data-selection="1"[^]*?class="num level">8</);

      const route = await c.request('/routes', { form: { csrf, route: 'R1', machines: 'M1\nM2', wd1: '1' } });
      assert.equal(route.status, 303);
      const { day, dayMs } = dayParam(null, Date.now());
      const pick = await c.request(`/routes/R1/pick?day=${day}`);
      assert.equal(pick.status, 200);
      // M2 was never filled: both its selections are below their thresholds, 8 + 8 to bring; M1 is full.
      assert.match(pick.text, /data-product="WATER"[^]*?class="num strong">8</);
      const csv = await c.request(`/routes/R1/pick.csv?day=${day}`);
      const r = await routeDay(store.db, 'R1', dayMs, Date.now());
      assert.equal(csv.text, pickListCsv(r!, await productList(store.db)));
      assert.match(csv.text, /^product,name,quantity,selections\r\n/);

      const exported = await c.request('/planograms/export.csv');
      assert.equal(exported.text, writePlanogramCsv(await readPlanogramSet(store.db)));

      const prepared = await c.request('/catalog/prepare', { form: { csrf, scope: 'template:T-2' } });
      assert.equal(prepared.status, 303, 'to the push page: a reload prepares nothing again');
      const pushPage = await c.request(prepared.headers.get('location') ?? '');
      assert.match(pushPage.text, /Prepared 2 documents/);
      const link = /href="([^"]+)" id="documents-link"/.exec(pushPage.text);
      const docs = await c.request((link?.[1] ?? '').replace(/&amp;/g, '&'));
      const parsed = JSON.parse(docs.text) as { documents: { machineId: string; version: number }[] };
      assert.deepEqual(
        parsed.documents.map((d) => [d.machineId, d.version]),
        [
          ['M1', 1],
          ['M2', 1],
        ],
      );
    });
  },
);
