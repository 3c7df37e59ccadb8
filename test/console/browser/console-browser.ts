/**
 * The console in a real browser (Debian's chromium through puppeteer-core; nothing downloads a
 * browser), fed through Debian's mosquitto by a real agent (the daemon with its VMC and gateway
 * simulators) and by simulated machines publishing as devices do. Run by `npm run console-test`
 * (run.ts), once on SQLite and once on a PostgreSQL server of the test's own.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import mqtt, { type MqttClient } from 'mqtt';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { createRig, type Rig } from '../../../rigs/rig.js';
import { startMosquitto } from '../../../rigs/broker/mosquitto-broker.js';
import type { TestBroker } from '../../../rigs/broker/types.js';
import { reportCashSale } from '../../../src/sim/vmc/index.js';
import { silentLogger } from '../../../src/core/log.js';
import { parseConsoleConfig } from '../../../src/console/config.js';
import { startConsole, type RunningConsole } from '../../../src/console/run.js';
import { putUser } from '../../../src/console/store/accounts.js';
import { salesByMachineDay } from '../../../src/console/store/report-queries.js';
import { salesCsv, salesQuery } from '../../../src/console/web/pages/sales.js';
import { buy, openSession } from '../../e2e/support/static-session.js';
import { vmcIdle, waitTx } from '../../e2e/support/e2e-rig.js';
import { openTestStore, type TestStore } from '../support/store.js';
import { waitFor } from '../support/wait.js';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../../support/deadlines.js';

// What the functions run inside the page see (this project compiles without the DOM library).
declare const document: {
  body: { dataset: Record<string, string | undefined> };
  querySelector(s: string): { textContent: string | null } | null;
};
declare const window: Record<string, unknown>;

const T = { timeout: CHILD_DEADLINE_MS };
const AGENT = 'M-CONSOLE-1';
const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>';
const CHROMIUM = process.env.QRVEND_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = process.env.QRVEND_CONSOLE_SCREENSHOTS;
/** A time as the pages show it: in the reader's zone, to the second (the exact instant on hover). */
const SHOWN_TIME = /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \S+/;

let broker: TestBroker;
let store: TestStore;
let consoleApp: RunningConsole;
let rig: Rig;
let browser: Browser;
let page: Page;
const sims: MqttClient[] = [];

function now(): string {
  return new Date().toISOString();
}

function status(machineId: string, extra: Record<string, unknown> = {}) {
  return {
    online: true,
    machineId,
    terminalId: `T-${machineId}`,
    uniQr: null,
    version: '1.4.0',
    startedAt: now(),
    reader: 'enabled',
    readerDisabledRemotely: false,
    gateway: 'online',
    outbox: { pending: 0, dead: 0 },
    alarms: [],
    acceptsRelayedStart: false,
    at: now(),
    ...extra,
  };
}

/** A simulated machine: its own MQTT session with the last will a real agent sets. */
async function simMachine(machineId: string, extra: Record<string, unknown> = {}): Promise<MqttClient> {
  const client = await mqtt.connectAsync(broker.url, {
    clientId: `sim-${machineId}`,
    protocolVersion: 5,
    reconnectPeriod: 0,
    will: { topic: `qrvend/${machineId}/status`, payload: Buffer.from('{"online":false}'), qos: 1, retain: true },
  });
  sims.push(client);
  await client.publishAsync(`qrvend/${machineId}/status`, JSON.stringify(status(machineId, extra)), {
    qos: 1,
    retain: true,
  });
  return client;
}

async function shot(name: string): Promise<void> {
  if (SHOTS === undefined || SHOTS === '') return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

async function textOf(selector: string): Promise<string> {
  return page.$eval(selector, (el) => el.textContent ?? '');
}

/** Waits, in the page as it is (no reload), until the selector's text matches. */
async function waitText(selector: string, pattern: RegExp, what: string): Promise<void> {
  await page
    .waitForFunction(
      (sel, source, flags) => new RegExp(source, flags).test(document.querySelector(sel)?.textContent ?? ''),
      { timeout: 30_000 },
      selector,
      pattern.source,
      pattern.flags,
    )
    .catch(() => {
      throw new Error(`gave up waiting for ${what}`);
    });
}

before(
  async () => {
    broker = await startMosquitto({});
    store = await openTestStore();
    await putUser(store.db, 'operator', 'admin', 'operator-password-1');
    const settings = parseConsoleConfig({
      broker: { url: broker.url, protocol: '5' },
      db: store.target,
      listen: '127.0.0.1:0',
      instance: 'browser-test',
    });
    consoleApp = await startConsole(settings, silentLogger());
    rig = await createRig({
      config: {
        fleet: { url: broker.url, topicPrefix: 'qrvend', machineId: AGENT, protocolVersion: 5, healthIntervalS: 5 },
      },
    });
    // A generous deadline: on a loaded CI machine the payment worker can take far longer than its usual second.
    await rig.startAgent(120_000);
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
  },
  { timeout: TEST_DEADLINE_MS },
);

after(async () => {
  await browser?.close();
  for (const c of sims) c.end(true);
  await rig?.close();
  await consoleApp?.close();
  await store?.remove();
  await broker?.close();
});

test('log in; the real agent appears online on the overview', T, async () => {
  await page.goto(`${consoleApp.web.url}/login`);
  await shot('login');
  await page.type('input[name=name]', 'operator');
  await page.type('input[name=password]', 'operator-password-1');
  await Promise.all([page.waitForNavigation(), page.click('#login-submit')]);
  assert.equal(new URL(page.url()).pathname, '/');
  await waitText(`tr[data-machine="${AGENT}"]`, /online/, 'the agent online');
});

test('a sale made on the machine appears on the overview without a reload, then on the sales page', T, async () => {
  const before = await page.evaluate(() => Number(document.body.dataset.refreshed ?? '0'));
  const session = await openSession(rig);
  await buy(rig, 12, 1.5);
  assert.ok(rig.vmc.endSession());
  await vmcIdle(rig);
  await waitTx(rig, session.txId, (t) => t.state === 'settled', 'the Settlement');
  reportCashSale(rig.vmc, 21, 1.15);
  await waitText(`tr[data-machine="${AGENT}"] td:nth-child(9)`, SHOWN_TIME, 'the last sale on the overview');
  assert.ok(
    (await page.evaluate(() => Number(document.body.dataset.refreshed ?? '0'))) > before,
    'refreshed live, not reloaded',
  );
  await shot('overview');
  await page.goto(`${consoleApp.web.url}/sales`);
  await waitText(
    '#sales-machines',
    new RegExp(`${AGENT}\\s*EUR\\s*1\\.50\\s*1\\s*1\\.15\\s*1`),
    'the sale on the sales page',
  );
  assert.ok((await page.$$('svg.chart rect.bar')).length >= 1, 'the chart has a bar');
  await shot('sales');
});

test('the CSV export is what the database holds', T, async () => {
  const csvPath = await page.$eval('#csv-link', (a) => a.getAttribute('href') ?? '');
  const exported = await page.evaluate(async (path) => (await fetch(path)).text(), csvPath);
  const q = salesQuery(new URL(csvPath, 'http://x').searchParams, 100);
  const { rows } = await salesByMachineDay(store.db, q, true);
  assert.equal(exported, salesCsv(rows));
  assert.match(exported, new RegExp(`,${AGENT},EUR,1\\.50,1,1\\.15,1,0,0\\r\\n`));
});

test('a machine going away shows offline (its last will) without a reload', T, async () => {
  const sim = await simMachine('vm-sim-2');
  await page.goto(`${consoleApp.web.url}/?q=vm-sim-2`);
  await waitText('tr[data-machine="vm-sim-2"]', /online/, 'vm-sim-2 online');
  // A dropped connection, not a goodbye: the broker publishes the will.
  sim.stream.destroy();
  await waitText('tr[data-machine="vm-sim-2"]', /offline \(its last will\)/, 'vm-sim-2 offline');
});

test('an alarm raised, then cleared, with its advice', T, async () => {
  const sim = await simMachine('vm-sim-3', { alarms: ['BOARD_SILENT'] });
  const alarm = (eventId: string, state: string) =>
    JSON.stringify({
      kind: 'alarm',
      eventId,
      at: now(),
      machineId: 'vm-sim-3',
      code: 'BOARD_SILENT',
      state,
      detail: 'no line from the board for 15 s',
    });
  await sim.publishAsync('qrvend/vm-sim-3/events', alarm('a-1', 'raised'), { qos: 1 });
  await page.goto(`${consoleApp.web.url}/alarms?state=all`);
  await waitText('#alarms tr[data-code="BOARD_SILENT"] td.state', /open/, 'the alarm open');
  assert.match(await textOf('#alarms-by-code'), /BOARD_SILENT\s*1\s*The port is open but the board sends nothing/);
  // The advice's backticks are code, not Markdown shown as it is.
  assert.equal(await textOf('#alarms-by-code code'), 'qrvend doctor');
  await shot('alarms');
  await sim.publishAsync('qrvend/vm-sim-3/events', alarm('a-2', 'cleared'), { qos: 1 });
  await waitText('#alarms tr[data-code="BOARD_SILENT"] td.state', SHOWN_TIME, 'the alarm cleared');
});

test('a machine-sent <script> shows as text and runs nothing', T, async () => {
  await simMachine('vm-hostile', { terminalId: HOSTILE.slice(0, 128), version: '<script>window.__pwned=1</script>' });
  await waitFor(
    'the hostile status stored',
    async () =>
      (await store.db
        .selectFrom('machines')
        .select('machine_id')
        .where('machine_id', '=', 'vm-hostile')
        .executeTakeFirst()) !== undefined,
  );
  await page.goto(`${consoleApp.web.url}/machines/vm-hostile`);
  assert.match(await textOf('dl.facts'), /<script>window\.__pwned=1<\/script>/);
  await page.goto(`${consoleApp.web.url}/?q=vm-hostile`);
  assert.match(await textOf('#machines'), /<script>window\.__pwned=1<\/script>/);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await page.goto(`${consoleApp.web.url}/machines/${AGENT}`);
  await shot('machine');
});

test('audits and rollouts pages answer', T, async () => {
  const sim = await simMachine('vm-sim-4');
  await sim.publishAsync(
    'qrvend/vm-sim-4/events',
    JSON.stringify({
      kind: 'audit',
      eventId: 'au-1',
      at: now(),
      machineId: 'vm-sim-4',
      auditId: 'A1',
      part: 0,
      parts: 1,
      raw: '',
      summary: {
        check: { ok: true },
        reconciliation: { status: 'mismatch', difference: 2, message: 'DA2 says 12 vends, the ledger 10' },
      },
    }),
    { qos: 1 },
  );
  await sim.publishAsync(
    'qrvend/vm-sim-4/events',
    JSON.stringify({
      kind: 'update',
      eventId: 'up-1',
      at: now(),
      machineId: 'vm-sim-4',
      version: '1.5.0',
      running: '1.4.0',
      state: 'waiting',
      rolloutId: null,
      progress: null,
      detail: 'waits for the machine to be idle',
    }),
    { qos: 1 },
  );
  await page.goto(`${consoleApp.web.url}/audits`);
  await waitText('#audits', /vm-sim-4.*ok\s*mismatch\s*2/s, 'the audit verdict');
  await shot('audits');
  await page.goto(`${consoleApp.web.url}/rollouts`);
  await waitText('#rollout-machines', /vm-sim-4\s*waiting/, 'the rollout state');
  await shot('rollouts');
});

test('the overview counts read "N machines, N online, ..." with no gap before a comma', T, async () => {
  await page.goto(`${consoleApp.web.url}/`);
  assert.match(
    (await textOf('p.counts')).replace(/\s+/g, ' ').trim(),
    /^\d+ machines, \d+ online, \d+ cannot sell, \d+ with/,
  );
  // Where each count ends on the screen and where its comma starts: no margin between them.
  const gaps = await page.$$eval('p.counts span', (spans) =>
    spans.slice(0, -1).map((span) => {
      const comma = span.nextSibling as unknown as { textContent: string } | null;
      const range = (span as unknown as { ownerDocument: { createRange(): any } }).ownerDocument.createRange();
      range.setStart(comma, 0);
      range.setEnd(comma, 1);
      return [comma?.textContent?.charAt(0), range.getBoundingClientRect().left - span.getBoundingClientRect().right];
    }),
  );
  for (const [char, gap] of gaps) {
    assert.equal(char, ',');
    assert.ok(Math.abs(Number(gap)) < 1, `a gap of ${String(gap)} px before a comma`);
  }
});

test('a bidi override from a machine shows as an escape, not reversed text', T, async () => {
  await simMachine('vm-bidi', { terminalId: 'T-\u202eLIVE-TX', version: '1.4.0\u001b[2J' });
  await waitFor(
    'vm-bidi stored',
    async () =>
      (await store.db
        .selectFrom('machines')
        .select('machine_id')
        .where('machine_id', '=', 'vm-bidi')
        .executeTakeFirst()) !== undefined,
  );
  await page.goto(`${consoleApp.web.url}/machines/vm-bidi`);
  const facts = await textOf('dl.facts');
  assert.ok(facts.includes('T-\\u202eLIVE-TX') && facts.includes('1.4.0\\x1b[2J'), facts);
  assert.ok(!/[\u001b\u202e]/.test(facts));
  await shot('machine-escapes');
});

test('the pages at a phone width', T, async () => {
  await page.goto(`${consoleApp.web.url}/accounts`);
  await shot('accounts');
  await page.setViewport({ width: 390, height: 844, isMobile: true });
  try {
    for (const [name, path] of [
      ['overview-phone', '/'],
      ['sales-phone', '/sales'],
      ['alarms-phone', '/alarms?state=all'],
      ['machine-phone', `/machines/${AGENT}`],
      ['accounts-phone', '/accounts'],
    ] as const) {
      await page.goto(`${consoleApp.web.url}${path}`);
      // Nothing but a table's own scroller is wider than the screen.
      const wide = await page.evaluate(
        () => (document as unknown as { documentElement: { scrollWidth: number } }).documentElement.scrollWidth,
      );
      assert.ok(wide <= 390, `${path} is ${wide} px wide on a 390 px screen`);
      await shot(name);
    }
  } finally {
    await page.setViewport({ width: 1280, height: 800 });
  }
});
