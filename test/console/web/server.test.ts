import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../../src/core/log.js';
import { putUser } from '../../../src/console/store/accounts.js';
import { storeEvent, storeStatus } from '../../../src/console/store/ingest-queries.js';
import { startWeb, type ConsoleWeb } from '../../../src/console/web/server.js';
import type { FleetEvent } from '../../../src/fleet/contract/index.js';
import { openTestStore, type TestStore } from '../support/store.js';
import { WebClient } from '../support/web-client.js';

const AT = new Date().toISOString();
const HOSTILE = '<script>alert(1)</script>';

async function withConsole(run: (web: ConsoleWeb, store: TestStore) => Promise<void>, transport = 'loopback') {
  const store = await openTestStore('sqlite');
  const web = await startWeb({
    db: store.db,
    log: silentLogger(),
    listen: { host: '127.0.0.1', port: 0 },
    tls: null,
    transport,
    behindTlsProxy: false,
    sessionHours: 1,
    login: { failures: 3, windowS: 900 },
    pageSize: 50,
  });
  try {
    await putUser(store.db, 'admin1', 'admin', 'admin-password-1');
    await putUser(store.db, 'viewer1', 'viewer', 'viewer-password-1');
    await run(web, store);
  } finally {
    await web.close();
    await store.remove();
  }
}

test(
  'pages need a session; login sets an HttpOnly SameSite=Strict cookie; the CSP forbids inline script',
  { timeout: 60_000 },
  async () => {
    await withConsole(async (web) => {
      const c = new WebClient(web.url);
      assert.equal((await c.request('/')).status, 303);
      assert.equal((await c.request('/sales.csv')).status, 303);
      const ok = await c.login('admin1', 'admin-password-1');
      assert.equal(ok.status, 303);
      const set = ok.headers.getSetCookie().find((s) => s.startsWith('qrc_session='));
      assert.match(set ?? '', /HttpOnly; SameSite=Strict/);
      assert.doesNotMatch(set ?? '', /Secure/, 'plain HTTP on loopback: a Secure cookie would never come back');
      const home = await c.request('/');
      assert.equal(home.status, 200);
      const csp = home.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|https?:/);
      assert.doesNotMatch(home.text, /<script>|style=/);
    });
  },
);

test('off loopback the session cookie is Secure', { timeout: 60_000 }, async () => {
  await withConsole(async (web) => {
    const c = new WebClient(web.url);
    const ok = await c.login('admin1', 'admin-password-1');
    assert.match(ok.headers.getSetCookie().find((s) => s.startsWith('qrc_session=')) ?? '', /; Secure/);
  }, 'tls-proxy');
});

test('a form without its CSRF token, or from another site, changes nothing', { timeout: 60_000 }, async () => {
  await withConsole(async (web, store) => {
    const c = new WebClient(web.url);
    await c.login('admin1', 'admin-password-1');
    const accounts = await c.request('/accounts');
    const csrf = WebClient.csrfOf(accounts.text);
    const form = { name: 'mallory', role: 'admin', password: 'mallory-password' };
    assert.equal((await c.request('/accounts', { form })).status, 403);
    assert.equal((await c.request('/accounts', { form: { ...form, csrf: 'x'.repeat(csrf.length) } })).status, 403);
    assert.equal(
      (await c.request('/accounts', { form: { ...form, csrf }, headers: { origin: 'https://evil.example' } })).status,
      403,
    );
    assert.equal(
      await store.db.selectFrom('users').select('name').where('name', '=', 'mallory').executeTakeFirst(),
      undefined,
    );
    assert.equal((await c.request('/accounts', { form: { ...form, csrf } })).status, 200);
    assert.notEqual(
      await store.db.selectFrom('users').select('name').where('name', '=', 'mallory').executeTakeFirst(),
      undefined,
    );
    const login = new WebClient(web.url);
    await login.request('/login');
    assert.equal(
      (await login.request('/login', { form: { csrf: 'forged', name: 'admin1', password: 'admin-password-1' } }))
        .status,
      403,
    );
  });
});

test('a viewer cannot manage accounts', { timeout: 60_000 }, async () => {
  await withConsole(async (web) => {
    const c = new WebClient(web.url);
    await c.login('viewer1', 'viewer-password-1');
    assert.equal((await c.request('/accounts')).status, 403);
    const csrf = WebClient.csrfOf((await c.request('/')).text);
    assert.equal(
      (await c.request('/accounts', { form: { csrf, name: 'x1234567', role: 'admin', password: 'x'.repeat(12) } }))
        .status,
      403,
    );
  });
});

test(
  'failed logins are limited per account, even with the right password afterwards',
  { timeout: 60_000 },
  async () => {
    await withConsole(async (web) => {
      for (let i = 0; i < 3; i++)
        assert.equal((await new WebClient(web.url).login('admin1', 'wrong-password')).status, 401);
      const blocked = await new WebClient(web.url).login('admin1', 'admin-password-1');
      assert.equal(blocked.status, 429);
      assert.match(blocked.text, /Too many failed logins/);
    });
  },
);

test('machine-sent text is shown as text; CSV cells cannot start a formula', { timeout: 60_000 }, async () => {
  await withConsole(async (web, store) => {
    await storeStatus(
      store.db,
      '=HYPERLINK(1)',
      {
        online: true,
        machineId: '=HYPERLINK(1)',
        terminalId: HOSTILE,
        uniQr: null,
        version: HOSTILE,
        startedAt: AT,
        reader: 'enabled',
        readerDisabledRemotely: false,
        gateway: 'online',
        outbox: { pending: 0, dead: 0 },
        alarms: [],
        acceptsRelayedStart: false,
        at: AT,
      },
      AT,
    );
    const sale = {
      kind: 'sale',
      eventId: 'e1',
      at: AT,
      machineId: '=HYPERLINK(1)',
      txId: HOSTILE,
      flow: 'static',
      amount: '2.50',
      currency: 'EUR',
      products: [],
      closing: 'settlement',
      verdict: 'dead-letter',
    } as FleetEvent;
    await storeEvent(store.db, '=HYPERLINK(1)', sale, AT, '{}');
    const c = new WebClient(web.url);
    await c.login('viewer1', 'viewer-password-1');
    for (const path of ['/', `/machines/${encodeURIComponent('=HYPERLINK(1)')}`, '/sales']) {
      const page = await c.request(path);
      assert.equal(page.status, 200, path);
      assert.doesNotMatch(page.text, /<script>alert/, path);
    }
    assert.match((await c.request('/')).text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match((await c.request('/sales')).text, /1 dead-lettered payments/);
    const exported = await c.request('/sales.csv');
    assert.equal(exported.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.match(
      exported.text,
      new RegExp(`^${AT.slice(0, 10)},'=HYPERLINK\\(1\\),EUR,0\\.00,0,0\\.00,0,0,1\\r$`, 'm'),
    );
  });
});

test(
  "a new password ends the account's sessions; one's own change keeps only the session that made it",
  { timeout: 60_000 },
  async () => {
    await withConsole(async (web) => {
      const admin = new WebClient(web.url);
      const adminElsewhere = new WebClient(web.url);
      const viewer = new WebClient(web.url);
      await admin.login('admin1', 'admin-password-1');
      await adminElsewhere.login('admin1', 'admin-password-1');
      await viewer.login('viewer1', 'viewer-password-1');
      assert.equal((await viewer.request('/')).status, 200);
      const save = async (name: string, role: string, password: string) => {
        const csrf = WebClient.csrfOf((await admin.request('/accounts')).text);
        return admin.request('/accounts', { form: { csrf, name, role, password } });
      };
      assert.equal((await save('viewer1', 'viewer', 'viewer-password-2')).status, 200);
      assert.equal((await viewer.request('/')).status, 303, "the viewer's session outlived its password");
      assert.equal((await adminElsewhere.request('/')).status, 200);
      assert.equal((await save('admin1', 'admin', 'admin-password-2')).status, 200);
      assert.equal((await admin.request('/')).status, 200, 'the session that changed its own password ended');
      assert.equal((await adminElsewhere.request('/')).status, 303, "the admin's other session outlived it");
      assert.equal((await new WebClient(web.url).login('viewer1', 'viewer-password-2')).status, 303);
    });
  },
);
