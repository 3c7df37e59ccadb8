/**
 * The Alerts, Webhooks and API tokens pages through their forms: a viewer makes and changes only
 * their own rules (a bad field refused naming it), an admin anyone's; a webhook endpoint is added
 * only after its URL passed the checks and a signed test message (verified by standardwebhooks)
 * was answered 2xx; a receiver that redirects or is not allowed is refused; the secret is shown once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../../src/core/log.js';
import { putUser } from '../../../src/console/store/accounts.js';
import { listRules } from '../../../src/console/store/alert-queries.js';
import { startWeb } from '../../../src/console/web/server.js';
import { openTestStore } from '../support/store.js';
import { WebClient } from '../support/web-client.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const RULE = {
  name: 'board silent',
  condition: 'alarm',
  alarm_code: 'BOARD_SILENT',
  threshold_minutes: '0',
  machines: 'M-1, M-2',
  route_id: '',
  day1: 'on',
  day5: 'on',
  from: '08:00',
  to: '18:30',
  time_zone: 'Europe/Vienna',
  hold_minutes: '10',
  repeat_minutes: '60',
  notify_cleared: 'on',
  email: 'on',
  endpoint: '',
  enabled: 'on',
};

test(
  'rules through the form: own for a viewer, anyone for an admin; fields checked',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const store = await openTestStore('sqlite');
    const web = await startWeb({
      db: store.db,
      log: silentLogger(),
      listen: { host: '127.0.0.1', port: 0 },
      tls: null,
      transport: 'loopback',
      behindTlsProxy: false,
      sessionHours: 1,
      login: { failures: 5, windowS: 900 },
      pageSize: 50,
    });
    try {
      await putUser(store.db, 'vera', 'viewer', 'viewer-password-1');
      await putUser(store.db, 'adam', 'admin', 'admin-password-1');
      const vera = new WebClient(web.url);
      await vera.login('vera', 'viewer-password-1');
      const page = await vera.request('/alerts');
      assert.equal(page.status, 200);
      const csrf = WebClient.csrfOf(page.text);
      const saved = await vera.request('/alerts', { form: { csrf, owner: 'vera', ...RULE } });
      assert.equal(saved.status, 303);
      const [rule] = await listRules(store.db, 'vera');
      assert.deepEqual(
        [rule!.machines, rule!.days, rule!.from_minute, rule!.to_minute, rule!.time_zone, rule!.hold_minutes],
        ['M-1,M-2', '1,5', 480, 1110, 'Europe/Vienna', 10],
      );
      const badZone = await vera.request('/alerts', {
        form: { csrf, owner: 'vera', ...RULE, time_zone: 'Mars/Olympus' },
      });
      assert.equal(badZone.status, 400);
      assert.match(badZone.text, /Not saved: time zone: an IANA time zone/);
      const backwards = await vera.request('/alerts', {
        form: { csrf, owner: 'vera', ...RULE, from: '18:00', to: '08:00' },
      });
      assert.match(backwards.text, /Not saved: to: after from/);
      assert.equal((await vera.request('/alerts', { form: { csrf, owner: 'adam', ...RULE } })).status, 403);
      assert.equal((await vera.request('/alerts?owner=adam')).status, 403);
      assert.equal((await vera.request('/webhooks')).status, 403);
      assert.equal((await vera.request('/api-tokens')).status, 403);
      const email = await vera.request('/alerts/email', { form: { csrf, owner: 'vera', email: 'vera@ops.example' } });
      assert.match(email.text, /Alerts go to vera@ops\.example/);
      const adam = new WebClient(web.url);
      await adam.login('adam', 'admin-password-1');
      const hers = await adam.request('/alerts?owner=vera');
      assert.match(hers.text, /board silent/);
      const adamCsrf = WebClient.csrfOf(hers.text);
      const changed = await adam.request(`/alerts/${rule!.id}`, {
        form: { csrf: adamCsrf, owner: 'vera', ...RULE, name: 'renamed' },
      });
      assert.equal(changed.status, 303);
      assert.equal((await listRules(store.db, 'vera'))[0]!.name, 'renamed');
      await adam.request(`/alerts/${rule!.id}/delete`, { form: { csrf: adamCsrf, owner: 'vera' } });
      assert.equal((await listRules(store.db, 'vera')).length, 0);
    } finally {
      await web.close();
      await store.remove();
    }
  },
);

test(
  'a webhook endpoint is added after a signed test message; refused when it redirects or is not allowed',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const store = await openTestStore('sqlite');
    const web = await startWeb({
      db: store.db,
      log: silentLogger(),
      listen: { host: '127.0.0.1', port: 0 },
      tls: null,
      transport: 'loopback',
      behindTlsProxy: false,
      sessionHours: 1,
      login: { failures: 5, windowS: 900 },
      pageSize: 50,
    });
    const receiver = await startReceiver('whsec_placeholder');
    try {
      await putUser(store.db, 'adam', 'admin', 'admin-password-1');
      const adam = new WebClient(web.url);
      await adam.login('adam', 'admin-password-1');
      const csrf = WebClient.csrfOf((await adam.request('/webhooks')).text);
      receiver.answer = () => ({ status: 302, location: 'https://elsewhere.example/' });
      const redirected = await adam.request('/webhooks', {
        form: { csrf, url: receiver.url, events: 'on', from: 'now' },
      });
      assert.equal(redirected.status, 400);
      assert.match(
        redirected.text,
        /Not added: the test message failed: redirect to https:\/\/elsewhere.example\/ not followed/,
      );
      const inside = await adam.request('/webhooks', {
        form: { csrf, url: 'https://10.0.0.5/hook', events: 'on', from: 'now' },
      });
      assert.match(inside.text, /Not added: webhook receiver refused: 10.0.0.5 is inside a private network/);
      const plainHttp = await adam.request('/webhooks', {
        form: { csrf, url: 'http://hooks.example.com/x', events: 'on', from: 'now' },
      });
      assert.match(plainHttp.text, /plain http:\/\/ only to loopback/);
      receiver.answer = () => ({ status: 204 });
      const added = await adam.request('/webhooks', {
        form: { csrf, url: receiver.url, events: 'on', alerts: 'on', from: 'now' },
      });
      assert.equal(added.status, 200);
      const secret = /<pre id="shown-once">(whsec_[A-Za-z0-9+/=]+)<\/pre>/.exec(added.text)?.[1];
      assert.ok(secret);
      const test = receiver.received[receiver.received.length - 1]!;
      assert.equal(test.json.type, 'webhook.test');
      receiver.secret = secret;
      // The library verifies the test message with the secret shown: signed with it.
      const { Webhook } = await import('standardwebhooks');
      assert.doesNotThrow(() =>
        new Webhook(secret).verify(test.body, {
          'webhook-id': test.id,
          'webhook-timestamp': String(test.timestamp),
          'webhook-signature': test.signature,
        }),
      );
    } finally {
      await receiver.close();
      await web.close();
      await store.remove();
    }
  },
);
