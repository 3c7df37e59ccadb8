/**
 * Alert rules to e-mail through a real SMTP server (smtp-server on loopback, STARTTLS, a login
 * read from a credentials file): a raised alarm is mailed once it held for the rule's hold time,
 * saying which machine, what, since when, what to do and where to look, then its clear; the
 * Message-ID is the delivery's, the same on a retry after the server refused it once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../../src/core/log.js';
import type { FleetEvent } from '../../../src/fleet/contract/index.js';
import { AlertEvaluator } from '../../../src/console/alerts/evaluator.js';
import { createMailer, EmailSettings, readSmtpCredentials } from '../../../src/console/deliveries/email.js';
import { addRule, setEmail, type RuleFields } from '../../../src/console/store/alert-queries.js';
import { putUser } from '../../../src/console/store/accounts.js';
import { storeEventBatch } from '../../../src/console/store/event-batch.js';
import { makeSelfSignedCert, type TlsFixture } from '../../gateway/tls-fixture.js';
import { openDatabase, stopDatabases } from '../store/databases.js';
import { startSmtp, type SmtpReceiver } from '../support/smtp-receiver.js';
import { TestClock, testWorker } from '../deliveries/support.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
let tls: TlsFixture | null;
let smtp: SmtpReceiver;
let dir: string;
let credentials: string;
const login = { user: 'console@ops.example', password: 'smtp-pass-1234' };

before(async () => {
  tls = makeSelfSignedCert();
  dir = mkdtempSync(join(tmpdir(), 'qrvend-smtp-'));
  credentials = join(dir, 'smtp.json');
  writeFileSync(credentials, JSON.stringify(login), { mode: 0o600 });
  if (tls !== null) smtp = await startSmtp(tls, login);
});

after(async () => {
  await smtp?.close();
  tls?.cleanup();
  rmSync(dir, { recursive: true, force: true });
  stopDatabases();
});

const ALARM_RULE: RuleFields = {
  name: 'reader down',
  condition: 'alarm',
  alarm_code: '',
  threshold_minutes: 0,
  machines: '',
  route_id: '',
  days: '1,2,3,4,5,6,7',
  from_minute: 0,
  to_minute: 1440,
  time_zone: 'Europe/Berlin',
  hold_minutes: 5,
  repeat_minutes: 0,
  notify_cleared: 1,
  email: 1,
  endpoint_id: null,
  enabled: 1,
};

function alarm(eventId: string, state: 'raised' | 'cleared', at: string): FleetEvent {
  return {
    kind: 'alarm',
    eventId,
    at,
    machineId: 'M-7',
    code: 'READER_OFFLINE',
    state,
    detail: 'port /dev/ttyUSB0 gone',
  };
}

test('an alarm held for the hold time is mailed over STARTTLS, then its clear', T, async (t) => {
  if (tls === null) return t.skip('openssl is not installed');
  const store = (await openDatabase(t, 'sqlite'))!;
  const mailer = createMailer(
    EmailSettings.parse({
      host: '127.0.0.1',
      port: smtp.port,
      tls: 'starttls',
      from: 'console@ops.example',
      credentialsFile: credentials,
      caFile: tls.certFile,
    }),
  );
  try {
    const clock = new TestClock(Date.parse('2026-12-01T09:00:00.000Z'));
    await putUser(store.db, 'ana', 'viewer', 'a-long-password');
    await setEmail(store.db, 'ana', 'ana@ops.example');
    await addRule(store.db, 'ana', ALARM_RULE, '');
    const raisedAt = '2026-12-01T08:59:30.000Z';
    const e = alarm('a1', 'raised', raisedAt);
    await storeEventBatch(store.db, [{ machineId: 'M-7', event: e, receivedAt: raisedAt, raw: JSON.stringify(e) }]);
    const evaluator = new AlertEvaluator({
      db: store.db,
      instance: 'test-1',
      log: silentLogger(),
      clock: clock.now,
      everyMs: 30_000,
      publicUrl: 'https://console.ops.example',
    });
    const worker = testWorker(store, clock, { mailer });
    assert.equal(await evaluator.runOnce(), 0);
    clock.advance(4 * 60_000);
    assert.equal(await evaluator.runOnce(), 0);
    clock.advance(60_000);
    assert.equal(await evaluator.runOnce(), 1);
    smtp.refuseNext = 1;
    assert.equal(await worker.runOnce(), 1);
    assert.equal(smtp.mails.length, 0);
    clock.advance(5_000);
    assert.equal(await worker.runOnce(), 1);
    assert.equal(smtp.mails.length, 1);
    const [{ mail, to, tlsAtLogin }] = smtp.mails as [(typeof smtp.mails)[0]];
    assert.deepEqual(to, ['ana@ops.example']);
    assert.equal(tlsAtLogin, true);
    assert.equal(mail.subject, '[qrvend] ALERT M-7: an alarm is raised');
    const text = mail.text ?? '';
    assert.match(text, /^Machine: M-7$/m);
    assert.match(text, /^Since: 2026-12-01 09:59:30 CET$/m);
    assert.match(text, /^Detail: READER_OFFLINE: port \/dev\/ttyUSB0 gone$/m);
    assert.match(text, /^What to do: The serial link to the MDB board is down/m);
    assert.match(text, /^See: https:\/\/console\.ops\.example\/machines\/M-7$/m);
    const [delivery] = await store.db.selectFrom('deliveries').selectAll().execute();
    assert.match(mail.messageId ?? '', new RegExp(`^<${delivery!.id}@ops\\.example>$`));
    const attempts = await store.db.selectFrom('delivery_attempts').select(['status', 'error']).orderBy('id').execute();
    assert.equal(attempts[0]!.status, 451);
    const c = alarm('a2', 'cleared', '2026-12-01T09:10:00.000Z');
    await storeEventBatch(store.db, [{ machineId: 'M-7', event: c, receivedAt: c.at, raw: JSON.stringify(c) }]);
    clock.advance(60_000);
    assert.equal(await evaluator.runOnce(), 1);
    assert.equal(await worker.runOnce(), 1);
    assert.equal(smtp.mails[1]?.mail.subject, '[qrvend] CLEARED M-7: an alarm is raised');
  } finally {
    mailer.close();
    await store.remove();
  }
});

test('the SMTP credentials file: refused when others can read it, its content never in the error', () => {
  const open = join(dir, 'open.json');
  writeFileSync(open, JSON.stringify(login));
  chmodSync(open, 0o644);
  assert.throws(
    () => readSmtpCredentials(open),
    (err: Error) => /mode 0644/.test(err.message) && !err.message.includes(login.password),
  );
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, `user=${login.user} password=${login.password}`, { mode: 0o600 });
  assert.throws(
    () => readSmtpCredentials(bad),
    (err: Error) => /is not \{"user"/.test(err.message) && !err.message.includes(login.password),
  );
  assert.deepEqual(readSmtpCredentials(credentials), { user: login.user, pass: login.password });
});

test('plain SMTP is refused off loopback', () => {
  assert.throws(
    () => createMailer(EmailSettings.parse({ host: 'smtp.ops.example', port: 25, tls: 'none', from: 'c@ops.example' })),
    /would cross the network in clear/,
  );
});
