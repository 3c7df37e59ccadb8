/**
 * The console's cookies behind the site's TLS proxy (docs/console.md, "Security choices"): the
 * browser is on HTTPS even when the console itself listens on loopback, so the login and session
 * cookies must be Secure. Only plain HTTP on loopback with no proxy in front drops the flag.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN, startConsoleApp } from '../support/console-app.js';
import { WebClient } from '../support/web-client.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

async function cookiesOf(settings: Record<string, unknown>): Promise<string[]> {
  const app = await startConsoleApp(settings);
  try {
    const c = new WebClient(app.url);
    const loginPage = await c.request('/login');
    const loggedIn = await c.login(ADMIN.name, ADMIN.password);
    assert.equal(loggedIn.status, 303);
    return [...loginPage.headers.getSetCookie(), ...loggedIn.headers.getSetCookie()];
  } finally {
    await app.close();
  }
}

test('behind a TLS proxy on loopback, the login and session cookies are Secure', T, async () => {
  const cookies = await cookiesOf({ listen: '127.0.0.1:0', behindTlsProxy: true });
  const named = (name: string) => cookies.filter((s) => s.startsWith(`${name}=`));
  assert.ok(named('qrc_login').length > 0 && named('qrc_session').length > 0, cookies.join(' | '));
  for (const set of cookies) assert.match(set, /; Secure/, `sent without Secure behind the TLS proxy: ${set}`);
});

test('plain HTTP on loopback with no proxy: no Secure flag (the browser would never send it back)', T, async () => {
  const cookies = await cookiesOf({ listen: '127.0.0.1:0' });
  assert.ok(cookies.length > 0);
  for (const set of cookies) assert.doesNotMatch(set, /Secure/);
});
