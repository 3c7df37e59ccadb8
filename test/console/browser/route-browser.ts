/**
 * A day on the route in a real browser (Debian's chromium through puppeteer-core), with two real
 * agents (the daemon with its VMC and gateway simulators) and the console through Debian's
 * mosquitto; run by `npm run console-test` (run.ts) on SQLite and on PostgreSQL. A planner imports
 * a planogram, edits its template and applies it to the two machines; the console prepares their
 * catalog documents, the test signs and pushes them as `qrvend fleet catalog sign|push` do, and
 * both machines apply them between sessions and name the product by them on their screens; the
 * driver fills both to par on a phone; vends lower the stock; the pick list is what the test
 * works out from what it sold; a fill on the phone resets the levels; a tampered, an older and
 * another machine's document show their reasons. QRVEND_CONSOLE_SCREENSHOTS=DIR keeps the pages.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import { waitFor } from '../support/wait.js';
import { startMosquitto } from '../../../rigs/broker/mosquitto-broker.js';
import type { TestBroker } from '../../../rigs/broker/types.js';
import { silentLogger } from '../../../src/core/log.js';
import { parseConsoleConfig } from '../../../src/console/config.js';
import { startConsole, type RunningConsole } from '../../../src/console/run.js';
import { putUser } from '../../../src/console/store/accounts.js';
import { pushCatalogs, signCatalogs } from '../../../src/fleet/operator/catalog.js';
import type { CatalogStatus, UnsignedCatalog } from '../../../src/fleet/contract/catalog.js';
import { selectAndPay } from '../../e2e/support/dynamic-payment.js';
import { testKey, writeTrustFile } from '../../fleet/support/operator-keys.js';
import { openTestStore, type TestStore } from '../support/store.js';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../../support/deadlines.js';

declare const document: { querySelector(s: string): { textContent: string | null } | null };

const T = { timeout: CHILD_DEADLINE_MS };
const M1 = 'M-ROUTE-1';
const M2 = 'M-ROUTE-2';
const CHROMIUM = process.env.QRVEND_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = process.env.QRVEND_CONSOLE_SCREENSHOTS;
const planner = testKey('planner', ['catalog']);

// The planogram: 12 needs a visit as soon as one sells (threshold = par); 21's par is edited to 5.
const PLAN = [
  'template,model,selection,product,name,names,measurement,unit,capacity,par,threshold,price',
  'T-ROUTE,Tower 2,12,WATER,Sparkling water,de=Sprudelwasser,500,ml,10,8,8,1.50',
  'T-ROUTE,Tower 2,21,COLA,Cola zero,,330,ml,10,6,2,2.00',
].join('\n');

let broker: TestBroker;
let store: TestStore;
let app: RunningConsole;
const rigs: Rig[] = [];
/** M1's agent, M2's agent. */
let agents: [Rig, Rig];
let browser: Browser;
let page: Page;
let publisher: MqttClient;
let scratch: string;
let url: string;

async function shot(name: string, p: Page = page): Promise<void> {
  if (SHOTS === undefined || SHOTS === '') return;
  mkdirSync(SHOTS, { recursive: true });
  await p.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

async function waitText(selector: string, pattern: RegExp, what: string, p: Page = page): Promise<void> {
  await p
    .waitForFunction(
      (sel, source, flags) => new RegExp(source, flags).test(document.querySelector(sel)?.textContent ?? ''),
      { timeout: 30_000 },
      selector,
      pattern.source,
      pattern.flags,
    )
    .catch(async () => {
      const text = await p.$eval(selector, (el) => el.textContent ?? '').catch(() => '(absent)');
      throw new Error(`gave up waiting for ${what}: ${selector} says ${text.replace(/\s+/g, ' ').slice(0, 400)}`);
    });
}

async function submit(selector: string, p: Page = page): Promise<void> {
  await Promise.all([p.waitForNavigation(), p.click(selector)]);
}

async function setValue(selector: string, value: string): Promise<void> {
  await page.$eval(selector, (el, v) => ((el as unknown as { value: string }).value = v), value);
}

function catalogOf(machineId: string): Promise<CatalogStatus | null> {
  return store.db
    .selectFrom('machines')
    .select('catalog_status')
    .where('machine_id', '=', machineId)
    .executeTakeFirst()
    .then((r) => (r?.catalog_status == null ? null : (JSON.parse(r.catalog_status) as CatalogStatus)));
}

function screenSays(rig: Rig, text: string): boolean {
  return (rig.agent?.logs ?? []).some((l) => l.level === 'raw' && l.msg.includes(text));
}

/** One Dynamic QR sale of `item` at `price`, vended. */
async function sell(rig: Rig, item: number, price: number): Promise<void> {
  const pay = await selectAndPay(rig, item, price, 30_000);
  assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: price });
  assert.ok(rig.vmc.vendSuccess());
  assert.equal(await pay.result, 'vended');
}

/** The documents of the push the catalog page offers, signed as `qrvend fleet catalog sign` does. */
async function signedPush(): Promise<ReturnType<typeof signCatalogs>> {
  const href = await page.$eval('#documents-link', (a) => a.getAttribute('href') ?? '');
  const text = await page.evaluate(async (path) => (await fetch(path)).text(), href);
  const file = join(scratch, 'catalog-documents.json');
  writeFileSync(file, text);
  const { documents } = JSON.parse(text) as { documents: UnsignedCatalog[] };
  return signCatalogs({ documents }, { keyId: planner.keyId, key: planner.key, nowMs: Date.now() });
}

async function startAgent(machineId: string, trustFile: string): Promise<Rig> {
  const rig = await createRig({
    vmc: { vendPolicy: 'manual' },
    config: {
      mdb: { alwaysIdle: true },
      display: { terminal: true },
      catalog: { '12': { name: 'Water' }, '21': { name: 'Cola' } },
      fleet: { url: broker.url, topicPrefix: 'qrvend', machineId, protocolVersion: 5, healthIntervalS: 5, trustFile },
    },
  });
  rigs.push(rig);
  await rig.startAgent(120_000);
  return rig;
}

before(
  async () => {
    scratch = mkdtempSync(join(tmpdir(), 'qrvend-route-browser-'));
    broker = await startMosquitto({});
    store = await openTestStore();
    await putUser(store.db, 'dana', 'planner', 'planner-password-1');
    const settings = parseConsoleConfig({
      broker: { url: broker.url, protocol: '5' },
      db: store.target,
      listen: '127.0.0.1:0',
      instance: 'route-browser-test',
    });
    app = await startConsole(settings, silentLogger());
    url = app.web.url;
    const trustFile = writeTrustFile(scratch, [planner]);
    agents = await Promise.all([startAgent(M1, trustFile), startAgent(M2, trustFile)]);
    publisher = await mqtt.connectAsync(broker.url, { protocolVersion: 5, clientId: 'route-test-publisher' });
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    for (const m of [M1, M2]) await waitFor(`${m}'s catalog status`, async () => (await catalogOf(m)) !== null, 30_000);
  },
  { timeout: TEST_DEADLINE_MS },
);

after(async () => {
  await browser?.close();
  publisher?.end(true);
  for (const rig of rigs) await rig.close();
  await app?.close();
  await store?.remove();
  await broker?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

test('a planner imports a planogram, edits its template and applies it to two machines', T, async () => {
  await page.goto(`${url}/login`);
  await page.type('input[name=name]', 'dana');
  await page.type('input[name=password]', 'planner-password-1');
  await submit('#login-submit');
  await page.goto(`${url}/planograms`);
  await setValue('#import-text', PLAN);
  await submit('#import-form button[type=submit]');
  await waitText('#notice', /Imported 2 products, 1 templates, 0 machines/, 'the import');
  await page.goto(`${url}/planograms/templates/T-ROUTE`);
  // Selection 21 is the second line: its par from 6 to 5.
  await setValue('input[name=s1_par]', '5');
  await submit('#template-save');
  await waitText('#notice', /Saved T-ROUTE/, 'the template saved');
  await setValue('textarea[name=machines]', `${M1}\n${M2}`);
  await submit('#apply-submit');
  await waitText('#notice', /Applied T-ROUTE to 2 machines/, 'the template applied');
  await waitText('#template-machines', new RegExp(`${M1}.*${M2}`), 'both machines listed');
  await shot('template');
  await page.goto(`${url}/planograms`);
  await shot('planograms');
});

test('the catalog is prepared, signed, pushed; both machines apply it and name the product by it', T, async () => {
  await page.goto(`${url}/catalog`);
  await page.select('select[name=scope]', 'template:T-ROUTE');
  await submit('#prepare-submit');
  await waitText('#notice', /Prepared 2 documents/, 'two documents prepared');
  await waitText('#catalog-machines', /intended/, 'intended before the push');
  await pushCatalogs(publisher, 'qrvend', await signedPush());
  for (const m of [M1, M2]) await waitFor(`${m} on version 1`, async () => (await catalogOf(m))?.version === 1, 30_000);
  await page.reload();
  await waitText(`#catalog-machines tr[data-machine="${M1}"] td.state`, /^applied$/, 'applied on the page');
  await waitText(`#catalog-machines tr[data-machine="${M2}"] td.state`, /^applied$/, 'applied on the page');
  // Applied between sessions: the next sale's screen names the product as the document does.
  for (const rig of agents) {
    await sell(rig, 12, 1.5);
    await until(() => screenSays(rig, 'Sparkling water'), 15_000, 'the new name on the screen');
  }
});

test('a driver fills both machines to par on a phone; vends lower the stock', T, async () => {
  const phone = await browser.newPage(); // the same browser: the same session cookie
  await phone.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
  for (const m of [M1, M2]) {
    await phone.goto(`${url}/visit/${m}`);
    await Promise.all([phone.waitForNavigation(), phone.tap('#fill-par')]);
    await waitText('#notice', /The fill is recorded/, 'the fill recorded', phone);
  }
  await phone.close();
  // Sold after the fill: M1 two waters; M2 one water and one cola (the VMC asks 2.20, the planogram 2.00).
  await sell(agents[0], 12, 1.5);
  await sell(agents[0], 12, 1.5);
  await sell(agents[1], 12, 1.5);
  await sell(agents[1], 21, 2.2);
  await page.goto(`${url}/stock/${M1}`);
  await waitText('#machine-stock tr[data-selection="12"] td.level', /^6$/, 'M1 water 8 - 2');
  await page.goto(`${url}/stock/${M2}`);
  await waitText('#machine-stock tr[data-selection="21"] td.level', /^4$/, 'M2 cola 5 - 1');
  await waitText('#machine-stock tr[data-selection="21"]', /2\.20\s*price differs/, 'the price flag');
  await shot('stock-machine');
});

test('the pick list is what was sold; it prints on A4 and exports as CSV', T, async () => {
  await page.goto(`${url}/routes`);
  await setValue('#route-form input[name=route]', 'North');
  await setValue('#route-form textarea[name=machines]', `${M1}\n${M2}`);
  await submit('#route-save');
  await page.goto(`${url}/routes`);
  await waitText('#needs', new RegExp(`${M1}[^]*${M2}`), 'both machines need a visit');
  await shot('routes');
  // Both need a visit (water below its threshold of 8); at the visit now each brings what it sold.
  const sold = { WATER: 2 + 1, COLA: 1 };
  await page.goto(`${url}/routes/North/pick`);
  await waitText('#pick tr[data-product="WATER"] td.strong', new RegExp(`^${sold.WATER}$`), 'the water to bring');
  await waitText('#pick tr[data-product="COLA"] td.strong', new RegExp(`^${sold.COLA}$`), 'the cola to bring');
  await shot('pick-list');
  const csvPath = await page.$eval('#pick-csv', (a) => a.getAttribute('href') ?? '');
  const csv = await page.evaluate(async (path) => (await fetch(path)).text(), csvPath);
  assert.equal(csv, `product,name,quantity,selections\r\nWATER,Sparkling water,3,2\r\nCOLA,Cola zero,1,1\r\n`);
  const pdf = Buffer.from(await page.pdf({ format: 'A4', printBackground: true }));
  assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
  assert.equal((pdf.toString('latin1').match(/\/Type\s*\/Page\b/g) ?? []).length, 1, 'one A4 page');
  if (SHOTS !== undefined && SHOTS !== '') {
    // The printed page as chromium's own PDF viewer shows it.
    const file = join(scratch, 'pick-list.pdf');
    writeFileSync(file, pdf);
    const viewer = await browser.newPage();
    await viewer.setViewport({ width: 900, height: 1000 });
    await viewer.goto(`file://${file}`, { waitUntil: 'networkidle0' }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1500));
    await viewer.screenshot({ path: `${SHOTS}/pick-list-a4.png` });
    await viewer.close();
  }
});

test('a fill on the phone resets the levels', T, async () => {
  const phone = await browser.newPage(); // the same browser: the same session cookie
  await phone.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
  await phone.goto(`${url}/visit/${M2}`);
  await waitText('li.sel[data-selection="21"] .put-in', /put in 1/, 'what to put in', phone);
  await shot('visit', phone);
  await phone.type('textarea[name=note]', 'coins jammed, cleared');
  await Promise.all([phone.waitForNavigation(), phone.tap('#fill-record')]);
  await waitText('#notice', /The fill is recorded/, 'the fill recorded', phone);
  await phone.close();
  await page.goto(`${url}/stock/${M2}`);
  await waitText('#machine-stock tr[data-selection="12"] td.level', /^8$/, 'water at par again');
  await waitText('#machine-stock tr[data-selection="21"] td.level', /^5$/, 'cola at par again');
  await waitText('#fills', /dana[^]*coins jammed, cleared/, 'the fill with who and the note');
  await page.goto(`${url}/stock`);
  await shot('stock');
});

test("a tampered, an older and another machine's document show their reasons", T, async () => {
  await page.goto(`${url}/catalog`);
  await page.select('select[name=scope]', 'list');
  await setValue('textarea[name=machines]', M1);
  await submit('#prepare-submit');
  const [v2] = await signedPush();
  const topic = `qrvend/${M1}/catalog`;
  const older = signCatalogs(
    { machineId: M1, version: 1, items: { '12': { name: 'Old water' } } },
    { keyId: planner.keyId, key: planner.key, nowMs: Date.now() },
  );
  const other = signCatalogs(
    { machineId: 'M-OTHER', version: 9, items: { '12': { name: 'Other' } } },
    { keyId: planner.keyId, key: planner.key, nowMs: Date.now() },
  );
  const cases: [unknown, string][] = [
    [{ ...v2!, items: { '12': { name: 'Gin' } } }, 'bad-signature'],
    [older[0], 'older'],
    [other[0], 'other-machine'],
  ];
  for (const [doc, reason] of cases) {
    await publisher.publishAsync(topic, JSON.stringify(doc), { qos: 1, retain: true });
    await page.goto(`${url}/catalog`);
    await waitText(`#catalog-machines tr[data-machine="${M1}"] td.why`, new RegExp(reason), `refused as ${reason}`);
  }
  // The push of version 2 keeps its own refusal though the machine has refused others since.
  await waitText(`#catalog-machines tr[data-machine="${M1}"] td.state`, /^refused$/, 'version 2 refused');
  await waitText(`#catalog-machines tr[data-machine="${M1}"] td.why`, /^bad-signature/, 'its reason kept');
  await shot('catalog');
  assert.equal((await catalogOf(M1))?.version, 1, 'still version 1');
});
