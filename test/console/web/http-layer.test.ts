/**
 * What the console's HTTP layer (fastify, its cookie and form plugins, our guard) must keep: the
 * cookies' attributes, the security headers on every answer, CSRF on every form, the body bound,
 * 404 and 405, 400 (never 500) for a URL or parameter it cannot read, the login limit's address
 * behind the TLS proxy, HTTPS, and the time bounds of a request.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { silentLogger } from '../../../src/core/log.js';
import { putUser } from '../../../src/console/store/accounts.js';
import { CONTENT_SECURITY_POLICY, MAX_FORM_BYTES } from '../../../src/console/web/http-kit.js';
import { startWeb, type ConsoleWeb, type WebOptions } from '../../../src/console/web/server.js';
import { makeSelfSignedCert } from '../../gateway/tls-fixture.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';
import { openTestStore, type TestStore } from '../support/store.js';
import { WebClient } from '../support/web-client.js';

async function withConsole(
  run: (web: ConsoleWeb, store: TestStore) => Promise<void>,
  overrides: Partial<WebOptions> = {},
): Promise<void> {
  const store = await openTestStore('sqlite');
  const web = await startWeb({
    db: store.db,
    log: silentLogger(),
    listen: { host: '127.0.0.1', port: 0 },
    tls: null,
    transport: 'loopback',
    behindTlsProxy: false,
    sessionHours: 1,
    login: { failures: 3, windowS: 900 },
    pageSize: 50,
    ...overrides,
  });
  try {
    await putUser(store.db, 'admin1', 'admin', 'admin-password-1');
    await run(web, store);
  } finally {
    await web.close();
    await store.remove();
  }
}

/** A request with the client's cookies and a body as given (not necessarily a form). */
async function raw(c: WebClient, path: string, init: { method?: string; type?: string; body?: string } = {}) {
  const headers: Record<string, string> = { cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  if (init.type !== undefined) headers['content-type'] = init.type;
  const res = await fetch(c.base + path, {
    method: init.method ?? 'GET',
    headers,
    body: init.body,
    redirect: 'manual',
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The attributes of a Set-Cookie line, order aside: `name=value` first, then a sorted list. */
function cookieOf(headers: Headers, name: string): { value: string; attributes: string[] } | null {
  const line = headers.getSetCookie().find((s) => s.startsWith(`${name}=`));
  if (line === undefined) return null;
  const [pair, ...attributes] = line.split(';').map((s) => s.trim());
  return { value: pair!.slice(name.length + 1), attributes: attributes.sort() };
}

const userExists = async (store: TestStore, name: string) =>
  (await store.db.selectFrom('users').select('name').where('name', '=', name).executeTakeFirst()) !== undefined;

test(
  'the cookies keep their attributes: HttpOnly, SameSite=Strict, Path=/, Max-Age; Secure off loopback',
  {
    timeout: TEST_DEADLINE_MS,
  },
  async () => {
    for (const [transport, secure] of [
      ['loopback', []],
      ['tls-proxy', ['Secure']],
    ] as const) {
      await withConsole(
        async (web) => {
          const c = new WebClient(web.url);
          const form = await c.request('/login');
          const pre = cookieOf(form.headers, 'qrc_login');
          assert.deepEqual(pre?.attributes, ['HttpOnly', 'Max-Age=3600', 'Path=/', 'SameSite=Strict', ...secure]);
          assert.match(pre?.value ?? '', /^[A-Za-z0-9_-]{32}$/);
          const ok = await c.request('/login', {
            form: { csrf: WebClient.csrfOf(form.text), name: 'admin1', password: 'admin-password-1' },
          });
          assert.equal(ok.status, 303);
          const session = cookieOf(ok.headers, 'qrc_session');
          assert.deepEqual(session?.attributes, ['HttpOnly', 'Max-Age=3600', 'Path=/', 'SameSite=Strict', ...secure]);
          assert.match(session?.value ?? '', /^[A-Za-z0-9_-]{43}$/);
          const cleared = cookieOf(ok.headers, 'qrc_login');
          assert.deepEqual(cleared, {
            value: '',
            attributes: ['HttpOnly', 'Max-Age=0', 'Path=/', 'SameSite=Strict', ...secure],
          });
          const csrf = WebClient.csrfOf((await c.request('/')).text);
          const out = await c.request('/logout', { form: { csrf } });
          assert.equal(out.status, 303);
          assert.equal(out.headers.get('location'), '/login');
          assert.equal(cookieOf(out.headers, 'qrc_session')?.attributes.includes('Max-Age=0'), true);
        },
        { transport, behindTlsProxy: transport === 'tls-proxy' },
      );
    }
  },
);

test(
  'every answer carries the CSP without inline script, nosniff, no framing, no-store',
  {
    timeout: TEST_DEADLINE_MS,
  },
  async () => {
    await withConsole(async (web) => {
      const anonymous = new WebClient(web.url);
      const c = new WebClient(web.url);
      await c.login('admin1', 'admin-password-1');
      const answers = {
        page: await c.request('/'),
        asset: await c.request('/assets/console.js'),
        'login page': await anonymous.request('/login'),
        'redirect to login': await anonymous.request('/sales'),
        'not found': await c.request('/no-such-page'),
        'method not allowed': await c.request('/sales', { method: 'DELETE' }),
        'bad URL': await c.request('/machines/%E0%A4%A'),
        'bad parameter': await c.request('/alarms?page=1&page=2'),
        'body too large': await raw(c, '/accounts', {
          method: 'POST',
          type: 'application/x-www-form-urlencoded',
          body: 'x='.padEnd(MAX_FORM_BYTES + 10, 'x'),
        }),
      };
      for (const [what, answer] of Object.entries(answers)) {
        assert.equal(answer.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY, what);
        assert.equal(answer.headers.get('x-content-type-options'), 'nosniff', what);
        assert.equal(answer.headers.get('x-frame-options'), 'DENY', what);
        assert.equal(answer.headers.get('referrer-policy'), 'same-origin', what);
        assert.equal(answer.headers.get('cache-control'), 'no-store', what);
      }
      assert.match(CONTENT_SECURITY_POLICY, /^default-src 'none'; script-src 'self'; style-src 'self';/);
      assert.doesNotMatch(answers.page.text, /<script>|<script [^>]*>[^<]|style=/);
      const live = await fetch(`${web.url}/live`, {
        headers: { cookie: `qrc_session=${c.cookies.get('qrc_session')}` },
      });
      assert.equal(live.status, 200);
      assert.equal(live.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(live.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
      await live.body?.cancel();
    });
  },
);

test(
  "a form is refused (403) without the session's CSRF token or from another site, and changes nothing",
  {
    timeout: TEST_DEADLINE_MS,
  },
  async () => {
    await withConsole(async (web, store) => {
      const c = new WebClient(web.url);
      await c.login('admin1', 'admin-password-1');
      const csrf = WebClient.csrfOf((await c.request('/')).text);
      assert.equal((await c.request('/logout', { method: 'POST' })).status, 403, 'no body at all');
      assert.equal((await c.request('/logout', { form: { csrf: '' } })).status, 403);
      assert.equal(
        (await c.request('/logout', { form: { csrf }, headers: { origin: 'https://evil.example' } })).status,
        403,
      );
      assert.equal((await c.request('/logout', { form: { csrf }, headers: { origin: 'null' } })).status, 403);
      assert.equal((await c.request('/')).status, 200, 'a refused logout ended the session');
      const remove = { name: 'victim1', csrf: csrf.slice(1) + 'A' };
      await putUser(store.db, 'victim1', 'viewer', 'victim-password-1');
      assert.equal((await c.request('/accounts/delete', { form: remove })).status, 403);
      assert.equal(await userExists(store, 'victim1'), true);
      assert.equal((await c.request('/accounts/delete', { form: { ...remove, csrf } })).status, 200);
      assert.equal(await userExists(store, 'victim1'), false);
      assert.equal((await c.request('/logout', { form: { csrf } })).status, 303);
      assert.equal((await c.request('/')).status, 303);
    });
  },
);

test(
  'a body is a form of at most 16 KiB (413 beyond, 415 for another type); without a session it is not read',
  {
    timeout: TEST_DEADLINE_MS,
  },
  async () => {
    await withConsole(async (web, store) => {
      const c = new WebClient(web.url);
      await c.login('admin1', 'admin-password-1');
      const csrf = WebClient.csrfOf((await c.request('/accounts')).text);
      const fields = { csrf, name: 'padded1', role: 'viewer', password: 'padded-password-1' };
      const padded = (bytes: number) => {
        const base = new URLSearchParams({ ...fields, pad: '' }).toString();
        return new URLSearchParams({ ...fields, pad: 'p'.repeat(bytes - base.length) }).toString();
      };
      const form = (body: string) =>
        raw(c, '/accounts', { method: 'POST', type: 'application/x-www-form-urlencoded', body });
      const tooLarge = await form(padded(MAX_FORM_BYTES + 1));
      assert.equal(tooLarge.status, 413);
      assert.equal(await userExists(store, 'padded1'), false);
      const json = await raw(c, '/accounts', {
        method: 'POST',
        type: 'application/json',
        body: JSON.stringify(fields),
      });
      assert.equal(json.status, 415);
      assert.equal(await userExists(store, 'padded1'), false);
      assert.equal((await form(padded(MAX_FORM_BYTES))).status, 200);
      assert.equal(await userExists(store, 'padded1'), true);
      const anonymous = new WebClient(web.url);
      const unread = await raw(anonymous, '/accounts', {
        method: 'POST',
        type: 'application/x-www-form-urlencoded',
        body: padded(MAX_FORM_BYTES * 4),
      });
      assert.equal(unread.status, 401);
    });
  },
);

test(
  'an unknown route is 404 (the login page without a session), a known one 405 to other methods; time is bounded',
  {
    timeout: TEST_DEADLINE_MS,
  },
  async () => {
    await withConsole(async (web) => {
      const anonymous = new WebClient(web.url);
      const nowhere = await anonymous.request('/no-such-page');
      assert.equal(nowhere.status, 303);
      assert.equal(nowhere.headers.get('location'), '/login');
      assert.equal((await anonymous.request('/live')).status, 401);
      assert.equal((await anonymous.request('/sales', { method: 'PUT' })).status, 401);
      const c = new WebClient(web.url);
      await c.login('admin1', 'admin-password-1');
      // Bounded time per request (with a server of its own given, fastify leaves its timeouts alone).
      assert.equal(web.server.headersTimeout, 10_000);
      assert.equal(web.server.requestTimeout, 15_000);
      const missing = await c.request('/no-such-page');
      assert.equal(missing.status, 404);
      assert.equal(missing.text, 'not found\n');
      assert.equal((await c.request('/sales/')).status, 404);
      for (const [method, path, allow] of [
        ['DELETE', '/sales', 'GET'],
        ['PUT', '/accounts', 'GET, POST'],
        ['GET', '/logout', 'POST'],
        ['POST', '/machines/vm-1', 'GET'],
        ['HEAD', '/', 'GET'],
      ] as const) {
        const answer = await c.request(path, { method });
        assert.equal(answer.status, 405, `${method} ${path}`);
        assert.equal(answer.headers.get('allow'), allow, `${method} ${path}`);
      }
    });
  },
);

test(
  'a malformed URL, a repeated parameter or form field is a 400 naming it, never a 500',
  {
    timeout: TEST_DEADLINE_MS,
  },
  async () => {
    await withConsole(async (web) => {
      const c = new WebClient(web.url);
      await c.login('admin1', 'admin-password-1');
      for (const path of ['/machines/%E0%A4%A', '/machines/%', '/%E0']) {
        const answer = await c.request(path);
        assert.equal(answer.status, 400, path);
        assert.match(answer.text, /not a valid url component/, path);
      }
      for (const [path, name] of [
        ['/sales?page=1&page=2', 'querystring/page'],
        ['/?filter=all&filter=offline', 'querystring/filter'],
        ['/alarms?code=a&code=b', 'querystring/code'],
      ] as const) {
        const answer = await c.request(path);
        assert.equal(answer.status, 400, path);
        assert.match(answer.text, new RegExp(`^${name} must be string`), path);
      }
      const twice = await raw(c, '/accounts', {
        method: 'POST',
        type: 'application/x-www-form-urlencoded',
        body: 'csrf=a&name=b&name=c',
      });
      assert.equal(twice.status, 400);
      assert.match(twice.text, /^body\/name must be string/);
      assert.equal((await c.request('/machines/a%2Fb')).status, 404, 'an id with an escaped slash is looked up');
      assert.equal((await c.request(`/machines/${'%C3%A9'.repeat(128)}`)).status, 404, 'a 128-character id');
    });
  },
);

test(
  'behind the TLS proxy, the login limit counts the last address the proxy added to X-Forwarded-For',
  {
    timeout: TEST_DEADLINE_MS,
  },
  async () => {
    await withConsole(
      async (web, store) => {
        const attempt = async (account: string, forwardedFor: string) => {
          const c = new WebClient(web.url);
          const csrf = WebClient.csrfOf((await c.request('/login')).text);
          const headers = { 'x-forwarded-for': forwardedFor };
          return (await c.request('/login', { form: { csrf, name: account, password: 'wrong-password' }, headers }))
            .status;
        };
        // The client forges the first entries; the proxy appends the address it saw, last.
        for (let i = 0; i < 3; i++) assert.equal(await attempt(`guess${i}`, `10.9.9.${i}, 192.0.2.7`), 401);
        assert.equal(await attempt('guess9', '10.9.9.9, 192.0.2.7'), 429);
        assert.equal(await attempt('guess9', '192.0.2.7, 192.0.2.8'), 401, 'another client behind the proxy');
        const keys = await store.db.selectFrom('login_failures').select(['key', 'failures']).orderBy('key').execute();
        const byAddress = keys.filter((k) => k.key.startsWith('addr:'));
        assert.deepEqual(
          byAddress.map((k) => [k.key, Number(k.failures)]),
          [
            ['addr:192.0.2.7', 3],
            ['addr:192.0.2.8', 1],
          ],
        );
      },
      { transport: 'tls-proxy', behindTlsProxy: true },
    );
  },
);

test('with certFile and keyFile the console serves HTTPS', { timeout: TEST_DEADLINE_MS }, async (t) => {
  const tls = makeSelfSignedCert();
  if (tls === null) return t.skip('openssl is not installed');
  try {
    await withConsole(
      async (web) => {
        assert.match(web.url, /^https:\/\/127\.0\.0\.1:\d+$/);
        const answer = await new Promise<{ status: number; csp: unknown; body: string }>((resolve, reject) => {
          const req = httpsRequest(`${web.url}/healthz`, { ca: tls.cert }, (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, csp: res.headers['content-security-policy'], body }),
            );
          });
          req.on('error', reject);
          req.end();
        });
        assert.deepEqual(answer, { status: 200, csp: CONTENT_SECURITY_POLICY, body: 'ok\n' });
      },
      { tls: { certFile: tls.certFile, keyFile: tls.keyFile }, transport: 'tls' },
    );
  } finally {
    tls.cleanup();
  }
});
