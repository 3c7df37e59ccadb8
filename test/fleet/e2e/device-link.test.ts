/**
 * The fleet link end to end (docs/decisions/fleet-link-first.md item 3): the real daemon (`qrvend run`), the VMC
 * simulator on
 * a pty pair, the gateway simulator on loopback, and a real MQTT broker (aedes in `npm test`,
 * mosquitto with QRVEND_TEST_BROKER=mosquitto). The daemon reaches the broker through a TCP gate
 * (rigs/broker/tcp-gate.ts) so an outage can end while the operator's client is already
 * subscribed again; the operator's client talks to the broker directly.
 *
 * One daemon for the file; tests run in order and each leaves the reader idle and enabled.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import { startTestBroker, startTcpGate, type TcpGate, type TestBroker } from '../../../rigs/broker/index.js';
import type { CashSaleEvent, SaleEvent } from '../../../src/fleet/contract/messages.js';
import { reportCashSale } from '../../../src/sim/vmc/index.js';
import { RESTART_EXIT_CODE } from '../../../src/fleet/machine-link/config-change.js';
import { PER_KEY_BUDGET } from '../../../src/fleet/machine-link/key-budgets.js';
import { buy, openSession } from '../../e2e/support/static-session.js';
import { vmcIdle, waitTx } from '../../e2e/support/e2e-rig.js';
import { PREFIX, protocolFor, startWatcher, type FleetWatcher } from './support/fleet-watcher.js';
import { OPERATOR_SCOPES, signCommand, testKey, writeTrustFile } from '../support/operator-keys.js';
import { machineArch } from '../../../src/updates/manifest.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const MACHINE = 'M-E2E-1';
const T = { timeout: TEST_DEADLINE_MS };

let broker: TestBroker;
let gate: TcpGate;
let rig: Rig;
let watcher: FleetWatcher;
let secretDir: string;
const password = randomBytes(24).toString('hex');
/** The operator's key: every command of this file is signed with it (the machine's trust file lists it). */
const operator = testKey('ops-e2e', OPERATOR_SCOPES);
/** Output of every daemon process the file started (the password check reads all of it). */
const outputs: string[] = [];
const remember = () => {
  if (rig.agent) outputs.push(JSON.stringify(rig.agent.logs) + rig.agent.stderr.join(''));
};

before(async () => {
  broker = await startTestBroker();
  gate = await startTcpGate({ port: broker.port });
  secretDir = mkdtempSync(join(tmpdir(), 'qrvend-fleet-e2e-'));
  const passwordFile = join(secretDir, 'broker-password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  const trustFile = writeTrustFile(secretDir, [operator]);
  rig = await createRig({
    vmc: { vendPolicy: 'manual' },
    config: {
      fleet: {
        url: gate.url,
        topicPrefix: PREFIX,
        machineId: MACHINE,
        protocolVersion: protocolFor(broker),
        healthIntervalS: 5,
        username: 'device-e2e',
        passwordFile,
        trustFile,
      },
    },
  });
  watcher = await startWatcher(broker.url, protocolFor(broker), MACHINE, operator);
  await rig.startAgent();
  await until(() => watcher.lastStatus()?.online === true, 10_000, 'the retained status online');
});

after(async () => {
  await watcher?.close();
  await rig?.close();
  await gate?.close();
  await broker?.close();
  if (secretDir) rmSync(secretDir, { recursive: true, force: true });
});

/** A Static QR sale of one item; resolves with its TransactionId once the session ended. */
async function sale(price = 1.5): Promise<string> {
  const session = await openSession(rig);
  await buy(rig, 12, price);
  assert.ok(rig.vmc.endSession());
  await vmcIdle(rig);
  // Settled at the gateway: the payment side has seen the session end (the next Start is not busy).
  await waitTx(rig, session.txId, (t) => t.state === 'settled', 'the Settlement');
  return session.txId;
}

/** Fleet events of the ledger file still waiting for the broker's acknowledgement. */
function queuedEvents(): Array<{ event_id: string; body: string }> {
  const db = new Database(join(rig.dir, 'ledger.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT event_id, body FROM fleet_events ORDER BY seq').all() as Array<{
      event_id: string;
      body: string;
    }>;
  } finally {
    db.close();
  }
}

const salesOf = (txId: string) => watcher.events.filter((e): e is SaleEvent => e.kind === 'sale' && e.txId === txId);

test('the retained status says who the machine is and what state it is in', T, async () => {
  const status = watcher.lastStatus()!;
  assert.equal(status.machineId, MACHINE);
  assert.equal(status.terminalId, rig.terminalId);
  assert.equal(status.uniQr, rig.uniQr);
  assert.equal(status.readerDisabledRemotely, false);
  assert.ok(Array.isArray(status.alarms));
  // The release architecture, so `qrvend fleet update` offers a manifest only where it fits.
  assert.equal(status.arch, machineArch() ?? undefined);
  assert.ok(status.arch !== undefined, `a release architecture for ${process.arch}`);
});

test("health carries the stats figures and the link's own counters", T, async () => {
  const withStats = () => watcher.health.filter((h) => h.stats?.reader !== undefined);
  await until(() => withStats().length >= 2, 25_000, 'two health messages with the stats');
  const [first, second] = withStats().slice(-2) as [Record<string, any>, Record<string, any>];
  assert.equal(second.machineId, MACHINE);
  // Live figures, not placeholders: the VMC polls all the time, so the reader's count of board
  // lines grows from one message to the next.
  assert.ok(first.stats.reader.linesIn > 0, `linesIn ${first.stats.reader.linesIn}`);
  assert.ok(
    second.stats.reader.linesIn > first.stats.reader.linesIn,
    `linesIn ${first.stats.reader.linesIn} then ${second.stats.reader.linesIn}`,
  );
  // The link's own counter agrees with what the daemon logged.
  const logged = rig.agent!.logs.filter((l) => l.msg === 'fleet link connected').length;
  assert.ok(logged >= 1);
  assert.equal(second.stats.fleet.connects, logged, 'one connect counted per "fleet link connected"');
  assert.deepEqual(Object.keys(second.stats.fleet.queued ?? {}).sort(), ['alarms', 'dropped', 'sales']);
});

test('a sale appears as exactly one event, removed from the queue once the broker acknowledged it', T, async () => {
  const txId = await sale(1.5);
  const event = (await watcher.waitForEvent(
    (e) => e.kind === 'sale' && e.txId === txId,
    10_000,
    'the sale event',
  )) as SaleEvent;
  assert.equal(event.closing, 'settlement');
  assert.equal(event.verdict, 'accepted');
  assert.equal(event.amount, '1.50');
  assert.equal(event.currency, 'EUR');
  assert.equal(event.flow, 'static');
  assert.deepEqual(event.products, [{ item: 12, price: '1.50', outcome: 'success' }]);
  // Once the row is gone the device can never publish it again: one event, for good.
  await until(
    () => !queuedEvents().some((r) => r.body.includes(txId)),
    10_000,
    'the event row to be deleted after PUBACK',
  );
  assert.equal(salesOf(txId).length, 1);
});

test(
  'a cash sale the VMC reports (paid to another device) appears as ' +
    'exactly one cash-sale event; nothing goes to the gateway',
  T,
  async () => {
    const before = Object.keys(rig.gateway.ledger().transactions).length;
    reportCashSale(rig.vmc, 21, 1.15);
    const event = (await watcher.waitForEvent(
      (e) => e.kind === 'cash-sale' && e.item === 21,
      10_000,
      'the cash-sale event',
    )) as CashSaleEvent;
    assert.deepEqual(
      { machineId: event.machineId, price: event.price, currency: event.currency },
      { machineId: MACHINE, price: '1.15', currency: 'EUR' },
    );
    await until(
      () => !queuedEvents().some((r) => r.event_id === event.eventId),
      10_000,
      'the cash-sale row to be deleted after PUBACK',
    );
    assert.equal(watcher.events.filter((e) => e.kind === 'cash-sale' && e.eventId === event.eventId).length, 1);
    assert.equal(
      Object.keys(rig.gateway.ledger().transactions).length,
      before,
      'never charged: no request to the gateway',
    );
  },
);

test(
  'commands: ping answers; unknown names, bad JSON and oversize payloads get error replies; the link survives',
  T,
  async () => {
    const ping = await watcher.command('ping');
    assert.equal(ping.ok, true);
    const unknown = await watcher.command('no.such.command');
    assert.equal(unknown.ok, false);
    assert.equal(!unknown.ok && unknown.error.code, 'UNKNOWN_COMMAND');
    // Bad JSON and an oversize payload: no body to read a correlationId from, so the reply goes to the
    // default reply topic with correlationId null.
    watcher.publishRaw('ping', '{"correlationId": "cid-bad", ');
    // Over the 64 KiB payload limit but under the MQTT packet bound: bigger ones never reach the device with MQTT 5
    // (test/relay/packet-size.test.ts).
    watcher.publishRaw('doctor', JSON.stringify({ args: { pad: 'x'.repeat(66_000) } }));
    const badPayload = (command: string) =>
      watcher.replies.find(
        (r) => r.command === command && !r.ok && r.error.code === 'BAD_PAYLOAD' && r.correlationId === null,
      );
    await until(
      () => badPayload('ping') !== undefined && badPayload('doctor') !== undefined,
      10_000,
      'BAD_PAYLOAD replies to bad JSON and to an oversize payload',
    );
    const args = await watcher.command('outbox.retry', { id: 'seven' });
    assert.equal(!args.ok && args.error.code, 'BAD_ARGS');
    const list = await watcher.command('outbox.list');
    assert.equal(list.ok, true);
    const doctor = await watcher.command('doctor', {}, 20_000);
    assert.equal(doctor.ok, true);
    const checks = (doctor.ok ? (doctor.result as { results: Array<{ id: string }> }).results : []).map((r) => r.id);
    assert.ok(checks.includes('ledger') && checks.includes('gateway'), `doctor checks: ${checks.join(', ')}`);
    assert.ok(!checks.includes('serial'), 'the serial port the agent holds is not opened by the doctor');
    const get = await watcher.command('config.get', { key: 'fleet.topicPrefix' });
    assert.deepEqual(get.ok && get.result, { key: 'fleet.topicPrefix', value: PREFIX });
    // cmd/start is served by the machine's Start decisions (src/start/relayed.ts) only with the relay's
    // voucher (docs/decisions/fleet-trust.md item 8): a broker client's own Start is refused and judged no further; bad
    // args too.
    const start = await watcher.command('start', {
      integratorName: 'x',
      body: '{}',
      deadlineAt: Date.now() + 5000,
      client: '127.0.0.1',
    });
    assert.equal(!start.ok && start.error.code, 'BAD_ARGS');
    assert.match(!start.ok ? start.error.message : '', /not vouched for by a relay key this machine trusts/);
    const badStart = await watcher.command('start', { integratorName: 'x' });
    assert.equal(!badStart.ok && badStart.error.code, 'BAD_ARGS');
    assert.equal((await watcher.command('ping')).ok, true, 'still answering');
  },
);

test(
  'a command flood is bounded: most of it is dropped unanswered, and the device answers again afterwards',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const budget = PER_KEY_BUDGET;
    const droppedSoFar = () => (watcher.health.at(-1)?.stats?.fleet?.commandsDropped ?? 0) as number;
    // The count before the flood from a health message sent after everything before it.
    const healthBefore = watcher.health.length;
    await until(() => watcher.health.length > healthBefore, 15_000, 'a health message before the flood');
    const droppedBefore = droppedSoFar();
    const ids = Array.from({ length: 200 }, (_, i) => `flood-${i}`);
    const started = performance.now();
    for (const id of ids)
      watcher.publishRaw(
        'ping',
        JSON.stringify({ correlationId: id, signature: signCommand(operator, MACHINE, 'ping', {}) }),
      );
    const answered = () =>
      watcher.replies.filter((r) => r.correlationId !== null && ids.includes(r.correlationId)).length;
    // Every flooded command is accounted for: answered, or counted as dropped (by the key's
    // budget, or the signature checks' before it) in a later health message (every 5 s).
    await until(
      () => answered() + (droppedSoFar() - droppedBefore) === ids.length,
      30_000,
      'every flooded command answered or counted as dropped',
    ).catch((err) => {
      throw new Error(
        `${err.message}: ${answered()} answered, dropped ${droppedBefore} ` +
          `before, ${JSON.stringify(watcher.health.at(-1)?.stats?.fleet)}`,
      );
    });
    const elapsedS = (performance.now() - started) / 1000;
    const dropped = droppedSoFar() - droppedBefore;
    assert.ok(dropped > ids.length / 2, `most of the flood is dropped: ${dropped} dropped, ${answered()} answered`);
    // No more answers than the budget allows over the whole time the flood could have been served.
    assert.ok(
      answered() <= budget.burst + budget.perSecond * elapsedS,
      `${answered()} answered in ${elapsedS.toFixed(1)} s, budget ${budget.burst} + ${budget.perSecond}/s`,
    );
    await new Promise((r) => setTimeout(r, 2_000)); // the key's budget refills at 10 a second
    assert.equal((await watcher.command('ping')).ok, true);
  },
);

test('MQTT 5: the reply goes to the response topic with the correlation data of the request', T, async (t) => {
  if (protocolFor(broker) !== 5) {
    t.skip(`the ${broker.kind} broker speaks MQTT 3.1.1 only (npm run fleet-test covers MQTT 5)`);
    return;
  }
  const { reply, correlationData } = await watcher.commandV5('ping', {}, 'ops/e2e/replies');
  assert.equal(reply.ok, true);
  assert.equal(reply.command, 'ping');
  assert.equal(reply.correlationId, correlationData!.toString('utf8'));
});

test(
  'the broker away for the length of 50 sales: all 50 arrive after it is back, none twice',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    gate.setMode('closed');
    await broker.stop();
    const txIds: string[] = [];
    for (let i = 0; i < 50; i++) txIds.push(await sale(1));
    await until(
      () => queuedEvents().filter((r) => txIds.some((id) => r.body.includes(id))).length === 50,
      15_000,
      'all 50 sale events queued in the ledger',
    );
    await broker.start();
    // The operator's client first (a restarted broker forgot every subscription), then the device.
    await watcher.close();
    watcher = await startWatcher(broker.url, protocolFor(broker), MACHINE, operator);
    gate.setMode('open');
    await until(() => txIds.every((id) => salesOf(id).length > 0), 30_000, 'all 50 sale events after the outage');
    await until(() => queuedEvents().length === 0, 10_000, 'the queue to drain');
    const ids = watcher.events.filter((e) => e.kind === 'sale' && txIds.includes(e.txId)).map((e) => e.eventId);
    assert.equal(ids.length, 50, 'no event twice');
    assert.equal(new Set(ids).size, 50);
    // The restarted broker lost the retained status: the device published it again on reconnect.
    await until(() => watcher.lastStatus()?.online === true, 10_000, 'the status published again after the reconnect');
  },
);

test(
  'kill -9 between the ledger write and the publish: the event arrives after the restart, same eventId',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    gate.setMode('closed');
    const txId = await sale(2);
    await until(
      () => queuedEvents().some((r) => r.body.includes(txId)),
      10_000,
      'the sale event written with the Settlement',
    );
    const queued = queuedEvents().find((r) => r.body.includes(txId))!;
    remember();
    await rig.stopAgent('SIGKILL');
    gate.setMode('open');
    await rig.startAgent();
    const event = await watcher.waitForEvent(
      (e) => e.kind === 'sale' && e.txId === txId,
      15_000,
      'the sale event after the restart',
    );
    assert.equal(event.eventId, queued.event_id);
    await until(() => queuedEvents().length === 0, 10_000, 'the queue to drain');
    assert.equal(salesOf(txId).length, 1);
  },
);

test(
  'reader.disable takes the reader out of service after the ' +
    'running session; the VMC sees it disabled; a restart keeps it',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const session = await openSession(rig);
    const disabled = await watcher.command('reader.disable');
    assert.deepEqual(disabled.ok && disabled.result, {
      readerDisabledRemotely: true,
      takesEffect: 'after the running session',
    });
    // The running session goes on: the consumer still buys.
    assert.equal(rig.vmc.state().hostEnabled, true);
    await buy(rig, 12, 1);
    assert.ok(rig.vmc.endSession());
    await until(() => !rig.vmc.state().hostEnabled, 10_000, 'the VMC to see the reader disabled (C,0)');
    await watcher.waitForEvent(
      (e) => e.kind === 'sale' && e.txId === session.txId,
      10_000,
      'the sale of the last session',
    );
    await until(
      () => watcher.lastStatus()?.readerDisabledRemotely === true,
      10_000,
      'the status to say out of service',
    );
    const refused = await rig.start();
    assert.notEqual(refused.outcome.kind, 'approved', 'no session while out of service');

    remember();
    await rig.stopAgent('SIGTERM');
    const mark = watcher.statuses.length;
    await rig.startAgent();
    await until(() => !rig.vmc.state().hostEnabled, 10_000, 'the reader disabled again after the restart');
    // The status comes after the subscription on the same connection: commands reach the device now.
    await until(
      () => watcher.statuses.slice(mark).some((st) => st.online === true),
      10_000,
      'the device back on the broker',
    );

    const enabled = await watcher.command('reader.enable');
    assert.equal(enabled.ok, true);
    await vmcIdle(rig);
    assert.equal(rig.vmc.state().hostEnabled, true);
  },
);

test(
  'a bad config.set is refused naming the key path; neither the site file nor the overlay is written',
  T,
  async () => {
    const before = readFileSync(rig.configFile);
    const wrongType = await watcher.command('config.set', { set: { dynamicQr: { pollIntervalMs: 'soon' } } });
    assert.equal(!wrongType.ok && wrongType.error.code, 'CONFIG_INVALID');
    assert.match(!wrongType.ok ? wrongType.error.message : '', /dynamicQr\.pollIntervalMs/);
    const unknownKey = await watcher.command('config.set', { set: { mdb: { sessionIdleTimeotMs: 30_000 } } });
    assert.match(!unknownKey.ok ? unknownKey.error.message : '', /mdb\.sessionIdleTimeotMs: unknown key/);
    const badArgs = await watcher.command('config.set', { sett: {} });
    assert.equal(!badArgs.ok && badArgs.error.code, 'BAD_ARGS');
    const moveOverlay = await watcher.command('config.set', { set: { fleet: { configOverlay: rig.configFile } } });
    assert.equal(!moveOverlay.ok && moveOverlay.error.code, 'BAD_ARGS');
    assert.match(!moveOverlay.ok ? moveOverlay.error.message : '', /fleet\.configOverlay/);
    assert.deepEqual(readFileSync(rig.configFile), before);
    assert.equal(existsSync(rig.overlayFile), false);
    assert.equal(rig.agent?.child.exitCode, null, 'still running');
  },
);

test(
  'a config.set that leaves the agent unhealthy is rolled back with the CONFIG_ROLLED_BACK alarm',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const before = readFileSync(rig.configFile);
    const agent = rig.agent!;
    const set = await watcher.command('config.set', {
      set: { mdb: { sessionIdleTimeoutMs: 40_000 } },
      healthyWithinS: 5,
    });
    assert.equal(set.ok, true, JSON.stringify(set));
    // The test plays systemd (Restart=always): the agent asked for a restart with its distinct exit code.
    assert.equal((await agent.exited).code, RESTART_EXIT_CODE);
    remember();
    assert.deepEqual(
      JSON.parse(readFileSync(rig.overlayFile, 'utf8')),
      { mdb: { sessionIdleTimeoutMs: 40_000 } },
      'the change is in the overlay',
    );
    // The board goes silent for the trial: the reader never comes up, so the change is not healthy.
    rig.vmc.silent(60_000);
    assert.deepEqual(readFileSync(rig.configFile), before, 'the site file is untouched');
    assert.ok(existsSync(`${rig.overlayFile}.pending.json`), 'the trial mark is beside the overlay');
    rig.agent = null;
    const trial = await rig.startAgentProcessOnly();
    assert.equal((await trial.exited).code, RESTART_EXIT_CODE, 'the trial start gave up and rolled back');
    remember();
    assert.equal(existsSync(rig.overlayFile), false, 'there was no overlay before: none now');
    assert.deepEqual(readFileSync(rig.configFile), before);
    rig.agent = null;
    rig.vmc.silent(0);
    await rig.startAgent();
    const alarm = await watcher.waitForEvent(
      (e) => e.kind === 'alarm' && e.code === 'CONFIG_ROLLED_BACK' && e.state === 'raised',
      15_000,
      'the CONFIG_ROLLED_BACK alarm',
    );
    assert.equal(alarm.kind === 'alarm' && alarm.machineId, MACHINE);
    await until(
      () => (watcher.lastStatus()?.alarms as string[] | undefined)?.includes('CONFIG_ROLLED_BACK') === true,
      10_000,
      'the status alarm list',
    );
  },
);

test(
  'a corrupt overlay is set aside with CONFIG_OVERLAY_REJECTED and the daemon starts on the site file',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    await rig.stopAgent('SIGTERM');
    remember();
    writeFileSync(rig.overlayFile, '{"mdb": {"sessionIdleTimeoutMs": 4');
    const agent = await rig.startAgent();
    const line = await agent.waitForLog(
      (l) => l.code === 'CONFIG_OVERLAY_REJECTED',
      5_000,
      'the overlay rejected log line',
    );
    assert.equal(line.level, 'error');
    assert.deepEqual(
      (line.problems as Array<{ path: string }>).map((p) => p.path),
      ['(file)'],
    );
    assert.equal(existsSync(rig.overlayFile), false);
    assert.equal(readFileSync(`${rig.overlayFile}.rejected`, 'utf8'), '{"mdb": {"sessionIdleTimeoutMs": 4');
    await until(
      () =>
        watcher.lastStatus()?.online === true &&
        (watcher.lastStatus()?.alarms as string[] | undefined)?.includes('CONFIG_ROLLED_BACK') === true,
      15_000,
      'online with the CONFIG_ROLLED_BACK alarm',
    );
    const get = await watcher.command('config.get', { key: 'mdb.sessionIdleTimeoutMs' });
    assert.deepEqual(get.ok && get.result, { key: 'mdb.sessionIdleTimeoutMs', value: 30_000 }, "the site file's value");
  },
);

test(
  'a good config.set on a read-only site file is applied by the ' +
    'restart, kept once healthy, and clears CONFIG_ROLLED_BACK',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    chmodSync(rig.configFile, 0o444);
    const before = readFileSync(rig.configFile);
    const agent = rig.agent!;
    const set = await watcher.command('config.set', {
      set: { mdb: { sessionIdleTimeoutMs: 45_000 } },
      healthyWithinS: 30,
    });
    assert.equal(set.ok, true, JSON.stringify(set));
    assert.equal((await agent.exited).code, RESTART_EXIT_CODE);
    remember();
    rig.agent = null;
    await rig.startAgent();
    await watcher.waitForEvent(
      (e) => e.kind === 'alarm' && e.code === 'CONFIG_ROLLED_BACK' && e.state === 'cleared',
      15_000,
      'CONFIG_ROLLED_BACK cleared',
    );
    assert.equal(existsSync(`${rig.overlayFile}.pending.json`), false, 'the trial is over');
    assert.equal(existsSync(`${rig.overlayFile}.previous`), false);
    assert.deepEqual(readFileSync(rig.configFile), before, 'the site file is byte for byte untouched');
    assert.equal(
      existsSync(`${rig.configFile}.pending.json`) || existsSync(`${rig.configFile}.previous`),
      false,
      'nothing written beside the site file',
    );
    const get = await watcher.command('config.get', { key: 'mdb.sessionIdleTimeoutMs' });
    assert.deepEqual(get.ok && get.result, { key: 'mdb.sessionIdleTimeoutMs', value: 45_000 });
    const all = await watcher.command('config.get');
    assert.deepEqual(
      all.ok && (all.result as { remote: unknown }).remote,
      { overlayFile: '(redacted)', set: { mdb: { sessionIdleTimeoutMs: 45_000 } } },
      'what came from afar',
    );
  },
);

test('the broker password never appears in the daemon output', T, async () => {
  remember();
  const output = outputs.join('\n');
  assert.ok(output.includes('fleet link connected'), 'the output checked is the daemon log');
  assert.ok(!output.includes(password), 'the password was logged');
});
