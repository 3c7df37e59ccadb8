/**
 * An alert rule made in a real browser (Debian's chromium through puppeteer-core) and its
 * notification arriving: an admin adds a webhook endpoint (checked with a signed test message),
 * makes a rule on the Alerts page, a machine raises an alarm through mosquitto, and the receiver
 * gets the signed `alert.raised` (verified with standardwebhooks) while the page lists the
 * notification delivered. Run by `npm run console-test` (the SQLite pass); screenshots of the
 * Alerts and Webhooks pages when QRVEND_CONSOLE_SCREENSHOTS is set.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import mqtt, { type MqttClient } from 'mqtt';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { startMosquitto } from '../../../rigs/broker/mosquitto-broker.js';
import type { TestBroker } from '../../../rigs/broker/types.js';
import { silentLogger } from '../../../src/core/log.js';
import { parseConsoleConfig } from '../../../src/console/config.js';
import { startConsole, type RunningConsole } from '../../../src/console/run.js';
import { putUser } from '../../../src/console/store/accounts.js';
import { openTestStore, type TestStore } from '../support/store.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { waitFor } from '../support/wait.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

declare const document: { querySelector(s: string): { textContent: string | null } | null };

const T = { timeout: TEST_DEADLINE_MS };
const CHROMIUM = process.env.QRVEND_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = process.env.QRVEND_CONSOLE_SCREENSHOTS;

let broker: TestBroker;
let store: TestStore;
let consoleApp: RunningConsole;
let browser: Browser;
let page: Page;
let receiver: Receiver;
let sim: MqttClient;

async function shot(name: string): Promise<void> {
  if (SHOTS === undefined || SHOTS === '') return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

before(
  async () => {
    broker = await startMosquitto({});
    store = await openTestStore();
    await putUser(store.db, 'operator', 'admin', 'operator-password-1');
    receiver = await startReceiver('whsec_unknown-until-shown');
    consoleApp = await startConsole(
      parseConsoleConfig({
        broker: { url: broker.url, protocol: '5' },
        db: store.target,
        listen: '127.0.0.1:0',
        instance: 'alerts-browser',
        alerts: { everyS: 5 },
        deliveries: { pollMs: 100, concurrency: 2 },
        publicUrl: 'https://console.ops.example',
      }),
      silentLogger(),
    );
    sim = await mqtt.connectAsync(broker.url, { clientId: 'sim-vm-alert', protocolVersion: 5 });
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
  },
  { timeout: TEST_DEADLINE_MS },
);

after(async () => {
  await browser?.close();
  await sim?.endAsync();
  await consoleApp?.close();
  await receiver?.close();
  await store?.remove();
  await broker?.close();
});

test('make a rule on the Alerts page and see its notification arrive', T, async () => {
  const url = consoleApp.web.url;
  await page.goto(`${url}/login`);
  await page.type('input[name=name]', 'operator');
  await page.type('input[name=password]', 'operator-password-1');
  await Promise.all([page.waitForNavigation(), page.click('#login-submit')]);
  await page.goto(`${url}/webhooks`);
  await page.type('input[name=url]', receiver.url);
  await Promise.all([page.waitForNavigation(), page.click('#endpoint-add')]);
  const secret = (await page.$eval('#shown-once', (el) => el.textContent ?? '')).trim();
  assert.match(secret, /^whsec_/);
  receiver.secret = secret;
  assert.equal(receiver.received[0]?.json.type, 'webhook.test');
  await page.goto(`${url}/alerts`);
  await page.type('#email-form input[name=email]', 'operator@ops.example');
  await Promise.all([page.waitForNavigation(), page.click('#email-form button')]);
  await page.type('#rule-form input[name=name]', 'board silent anywhere');
  await page.select('#rule-form select[name=condition]', 'alarm');
  for (const d of [6, 7]) await page.click(`#rule-form input[name=day${d}]`);
  await page.$eval('#rule-form input[name=hold_minutes]', (el) => ((el as unknown as { value: string }).value = '0'));
  await page.$eval(
    '#rule-form input[name=time_zone]',
    (el) => ((el as unknown as { value: string }).value = 'Europe/Berlin'),
  );
  const endpointOption = await page.$eval(
    '#rule-form select[name=endpoint] option:nth-child(2)',
    (el) => (el as unknown as { value: string }).value,
  );
  await page.select('#rule-form select[name=endpoint]', endpointOption);
  await Promise.all([page.waitForNavigation(), page.click('#rule-save')]);
  assert.match(await page.$eval('#rules', (el) => el.textContent ?? ''), /board silent anywhere/);
  const alarm = {
    kind: 'alarm',
    eventId: 'alert-a1',
    at: new Date().toISOString(),
    machineId: 'vm-alert',
    code: 'BOARD_SILENT',
    state: 'raised',
    detail: 'no line from the board for 15 s',
  };
  await sim.publishAsync('qrvend/vm-alert/events', JSON.stringify(alarm), { qos: 1 });
  const hook = await waitFor(
    'the alert webhook',
    () => receiver.received.find((r) => r.json.type === 'alert.raised'),
    60_000,
  );
  assert.equal(hook.verifyError, null);
  assert.equal(hook.json.data.machineId, 'vm-alert');
  assert.equal(hook.json.data.url, 'https://console.ops.example/machines/vm-alert');
  await waitFor(
    'the notification delivered',
    async () => {
      await page.goto(`${url}/alerts`);
      return /delivered/.test(await page.$eval('#notifications', (el) => el.textContent ?? '')) || undefined;
    },
    30_000,
  );
  const listed = await page.$eval('#notifications', (el) => el.textContent ?? '');
  assert.match(listed, /vm-alert/);
  assert.match(listed, /alert\.raised/);
  await shot('alerts');
  await page.goto(`${url}/webhooks/1`);
  assert.match(await page.$eval('#attempts', (el) => el.textContent ?? ''), /alerts-browser\s*204/);
  await shot('webhook');
});
