/**
 * The catalog document through the real daemon and a real broker (aedes in `npm test`, mosquitto in
 * `npm run fleet-test`): `qrvend fleet catalog sign` and `push` put a signed document retained on
 * the machine's topic; the machine applies it between sessions (a document arriving during a vend
 * waits for its end), names the product by it on its screen, keeps it across a restart, and
 * refuses a tampered, an older and another machine's document with the reason in its status.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
import { connect, type MqttClient } from 'mqtt';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import { startTestBroker, type TestBroker } from '../../../rigs/broker/index.js';
import { machineTopics } from '../../../src/fleet/contract/topics.js';
import type { CatalogStatus } from '../../../src/fleet/contract/catalog.js';
import { signCatalogs } from '../../../src/fleet/operator/catalog.js';
import { PREFIX, protocolFor, startWatcher, type FleetWatcher } from './support/fleet-watcher.js';
import { testKey, writeTrustFile } from '../support/operator-keys.js';
import { runCli } from '../operator/run-cli.js';
import { selectAndPay } from '../../e2e/support/dynamic-payment.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const MACHINE = 'M-CATALOG-1';
const T = { timeout: TEST_DEADLINE_MS };
const planner = testKey('planner', ['catalog']);
const topics = machineTopics(PREFIX, MACHINE);

let broker: TestBroker;
let rig: Rig;
let watcher: FleetWatcher;
let publisher: MqttClient;
let scratch: string;

function catalogStatus(): CatalogStatus | null {
  return (watcher.lastStatus()?.catalog as CatalogStatus | undefined) ?? null;
}

function doc(version: number, name: string, machineId = MACHINE) {
  return signCatalogs(
    { machineId, version, items: { '12': { name, names: { de: `${name} (de)` } } } },
    {
      keyId: planner.keyId,
      key: planner.key,
      nowMs: Date.now(),
    },
  )[0]!;
}

async function publish(value: unknown): Promise<void> {
  await publisher.publishAsync(topics.catalog, JSON.stringify(value), { qos: 1, retain: true });
}

function screenSays(text: string): boolean {
  return (rig.agent?.logs ?? []).some((l) => l.level === 'raw' && l.msg.includes(text));
}

before(async () => {
  broker = await startTestBroker();
  scratch = mkdtempSync(join(tmpdir(), 'qrvend-catalog-e2e-'));
  const trustFile = writeTrustFile(scratch, [planner]);
  rig = await createRig({
    vmc: { vendPolicy: 'manual' },
    config: {
      mdb: { alwaysIdle: true },
      display: { terminal: true },
      catalog: { '12': { name: 'Water' } },
      fleet: {
        url: broker.url,
        topicPrefix: PREFIX,
        machineId: MACHINE,
        protocolVersion: protocolFor(broker),
        healthIntervalS: 5,
        trustFile,
      },
    },
  });
  watcher = await startWatcher(broker.url, protocolFor(broker), MACHINE);
  publisher = await connect(broker.url, {
    protocolVersion: protocolFor(broker),
    clientId: `cat-${randomUUID().slice(0, 8)}`,
  });
  await new Promise<void>((resolve) => (publisher.connected ? resolve() : publisher.once('connect', () => resolve())));
  await rig.startAgent();
  await until(() => catalogStatus() !== null, 15_000, 'a status with the catalog');
}, T);

after(async () => {
  await publisher?.publishAsync(topics.catalog, '', { qos: 1, retain: true }).catch(() => {});
  publisher?.end(true);
  await watcher?.close();
  await rig?.close();
  await broker?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

test('signed and pushed with the CLI, the document is applied and names the product on the screen', T, async () => {
  assert.equal(catalogStatus()!.version, null, 'the site file alone at first');
  const unsigned = join(scratch, 'unsigned.json');
  const signed = join(scratch, 'signed.json');
  const key = join(scratch, 'planner.pem');
  writeFileSync(key, planner.privatePem, { mode: 0o600 });
  writeFileSync(
    unsigned,
    JSON.stringify({ documents: [{ machineId: MACHINE, version: 1, items: { '12': { name: 'Sparkling water' } } }] }),
  );
  const sign = await runCli([
    'fleet',
    'catalog',
    'sign',
    unsigned,
    '--sign-key',
    key,
    '--key-id',
    'planner',
    '--out',
    signed,
  ]);
  assert.equal(sign.code, 0, sign.stderr);
  const push = await runCli(['fleet', 'catalog', 'push', signed, '--url', broker.url, '--prefix', PREFIX]);
  assert.equal(push.code, 0, push.stderr);
  await until(() => catalogStatus()?.version === 1, 15_000, 'version 1 applied');
  const status = await runCli([
    'fleet',
    'catalog',
    'status',
    MACHINE,
    '--url',
    broker.url,
    '--prefix',
    PREFIX,
    '--json',
  ]);
  assert.equal(status.code, 0, status.stderr);
  const row = (JSON.parse(status.stdout) as { machines: Array<Record<string, any>> }).machines[0]!;
  assert.equal(row.pushed, 1);
  assert.equal(row.catalog.version, 1);
  const pay = await selectAndPay(rig, 12, 1.5);
  await until(() => screenSays('Sparkling water'), 15_000, 'the new name on the screen');
  assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 1.5 });
  assert.ok(rig.vmc.vendSuccess());
  assert.equal(await pay.result, 'vended');
});

test('a document arriving during a vend waits for its end', T, async () => {
  const pay = await selectAndPay(rig, 12, 1.5);
  assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 1.5 });
  await publish(doc(2, 'Mineral water'));
  await until(() => catalogStatus()?.pending === 2, 15_000, 'version 2 delivered, waiting');
  assert.equal(catalogStatus()!.version, 1, 'not applied in the middle of the sale');
  assert.ok(rig.vmc.vendSuccess());
  assert.equal(await pay.result, 'vended');
  await until(() => catalogStatus()?.version === 2 && catalogStatus()?.pending === null, 15_000, 'version 2 applied');
});

test("tampered, older and another machine's documents are refused with their reason", T, async () => {
  const tampered = { ...doc(3, 'Juice'), items: { '12': { name: 'Gin' } } };
  const cases: [unknown, string][] = [
    [tampered, 'bad-signature'],
    [doc(1, 'Old water'), 'older'],
    [doc(5, 'Other', 'M-OTHER'), 'other-machine'],
  ];
  for (const [value, reason] of cases) {
    await publish(value);
    await until(() => catalogStatus()?.refused?.reason === reason, 15_000, `refused as ${reason}`);
    assert.equal(catalogStatus()!.version, 2);
  }
});

test('the applied document is kept across a restart', T, async () => {
  await publish(doc(2, 'Mineral water')); // the retained one again: the very document kept
  await rig.stopAgent();
  await rig.startAgent();
  await until(
    () => catalogStatus()?.version === 2 && watcher.lastStatus()?.online === true,
    30_000,
    'version 2 after the restart',
  );
  assert.equal(catalogStatus()!.refused, null, 'the retained document kept is no refusal');
  const pay = await selectAndPay(rig, 12, 1.5);
  await until(() => screenSays('Mineral water'), 15_000, 'the kept name on the screen');
  assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 1.5 });
  assert.ok(rig.vmc.vendSuccess());
  assert.equal(await pay.result, 'vended');
});
