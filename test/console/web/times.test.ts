/**
 * What a person reads on the pages (docs/console.md, "Pages" and "Accounts"): times in the
 * reader's zone (the account's own, else the console's `timeZone`) to the second, with the exact
 * instant on hover, never the raw ISO text; an admin sets an account's zone on the Accounts page
 * without touching its password or sessions; the alarm advice shows what the docs put in
 * backticks as code. Through the real console: ingest on the broker, pages over HTTP, SQLite.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { putUser } from '../../../src/console/store/accounts.js';
import { ADMIN, startConsoleApp, type ConsoleApp } from '../support/console-app.js';
import { WebClient } from '../support/web-client.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const RAISED = '2026-12-04T19:29:56.769Z';
const M = 'vm-times';

async function raiseAlarm(app: ConsoleApp): Promise<void> {
  const alarm = { kind: 'alarm', eventId: 'a1', at: RAISED, machineId: M, code: 'BOARD_SILENT', state: 'raised' };
  await app.publish(M, 'events', { ...alarm, detail: 'no line for 15 s' });
  await app.waitStored(1);
}

test('no raw ISO time and no Markdown backtick on the pages', { timeout: TEST_DEADLINE_MS }, async () => {
  const app = await startConsoleApp();
  try {
    await raiseAlarm(app);
    const c = new WebClient(app.url);
    await c.login(ADMIN.name, ADMIN.password);
    for (const path of ['/alarms?state=all', `/machines/${M}`]) {
      const r = await c.request(path);
      assert.ok(!/>[^<]*2026-12-04T19:29:56/.test(r.text), `${path}: the raw ISO time is shown as text`);
      assert.match(r.text, /<time datetime="2026-12-04T19:29:56.769Z" title="[^"]*19:29:56\.769Z\)">2026-12-04 /);
      assert.match(r.text, /check the board is powered and wired to the VMC; <code>qrvend doctor<\/code>\./);
      assert.ok(!r.text.includes('`'), `${path}: a Markdown backtick on the page`);
    }
  } finally {
    await app.close();
  }
});

test(
  'times in the reader zone with the exact instant on hover; advice backticks as <code>',
  {
    timeout: TEST_DEADLINE_MS,
  },
  async () => {
    const app = await startConsoleApp({ timeZone: 'America/New_York' });
    try {
      await putUser(app.store.db, 'viewer1', 'viewer', 'viewer-password-1');
      await app.publish(M, 'events', {
        kind: 'alarm',
        eventId: 'a1',
        at: RAISED,
        machineId: M,
        code: 'BOARD_SILENT',
        state: 'raised',
        detail: 'no line for 15 s',
      });
      await app.waitStored(1);
      const admin = new WebClient(app.url);
      await admin.login(ADMIN.name, ADMIN.password);
      const viewer = new WebClient(app.url);
      await viewer.login('viewer1', 'viewer-password-1');

      // No zone of its own: the console's (New York, 5 hours behind UTC in December).
      const ny = await viewer.request('/alarms?state=all');
      const exact = '2026-12-04 14:29:56.769 GMT-5 (2026-12-04T19:29:56.769Z)';
      const shown = '2026-12-04 14:29:56 GMT-5';
      assert.ok(
        ny.text.includes(`<time datetime="2026-12-04T19:29:56.769Z" title="${exact}">${shown}</time>`),
        ny.text,
      );
      assert.ok(!/>[^<]*2026-12-04T19:29:56/.test(ny.text), 'the raw ISO time is shown as text');

      // The advice: `qrvend doctor` is code, no backtick left.
      assert.match(
        ny.text,
        /sends nothing: check the board is powered and wired to the VMC; <code>qrvend doctor<\/code>\./,
      );
      assert.ok(!ny.text.includes('`'), 'a Markdown backtick on the page');

      // An admin gives the viewer a zone of its own; the password stays, the session too.
      const csrf = WebClient.csrfOf((await admin.request('/accounts')).text);
      const saved = await admin.request('/accounts', {
        form: { csrf, name: 'viewer1', role: 'viewer', password: '', timeZone: 'Asia/Tokyo' },
      });
      assert.equal(saved.status, 200, saved.text);
      const tokyo = await viewer.request(`/machines/${M}`);
      assert.equal(tokyo.status, 200, 'the session outlived a change of time zone');
      assert.match(tokyo.text, />2026-12-05 04:29:56 GMT\+9<\/time>/);
      assert.equal((await new WebClient(app.url).login('viewer1', 'viewer-password-1')).status, 303);

      // A zone that is none is refused, naming it; the admin's own pages stay in the console's zone.
      const bad = await admin.request('/accounts', {
        form: { csrf, name: 'viewer1', role: 'viewer', password: '', timeZone: 'Mars/Olympus' },
      });
      assert.equal(bad.status, 400);
      assert.match(bad.text, /time zone &quot;Mars\/Olympus&quot; is not an IANA time zone/);
      assert.match((await admin.request('/alarms?state=all')).text, />2026-12-04 14:29:56 GMT-5<\/time>/);
    } finally {
      await app.close();
    }
  },
);
