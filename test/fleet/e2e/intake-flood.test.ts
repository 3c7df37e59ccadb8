/**
 * A flood of commands naming keys the machine does not trust cannot silence the operators
 * (docs/security.md, "Budgets per source"), through the real daemon and mosquitto with the
 * documented ACL (docs/fleet/mosquitto-acl.conf, loaded as it is). The operators' broker account,
 * which may publish on every machine's `cmd/` topics and holds no key, publishes 1,500 QoS-0
 * `cmd/ping` whose signatures name key ids the machine does not trust, then an operator's genuinely
 * signed `reader.disable`, then 1,500 more; three rounds.
 *
 * Before: the operator's command got no reply and the reader stayed enabled, 3 times of 3 (one
 * intake budget, 300/s, spent before anything was parsed). Now what names no trusted key spends
 * the untrusted share only, counted in health as `droppedBy.untrusted`.
 *
 * Also through the ACL: a config.set whose `set` names `__proto__` at its top level, signed with a
 * configure key, is refused (before: an empty overlay was written and the agent restarted, exit 75).
 *
 * mosquitto only (floods over seconds): `npm run fleet-test`. In `npm test`, the same intake in
 * process: test/fleet/machine-link/command-server.test.ts; the config.set: command-trust.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt, { type MqttClient } from 'mqtt';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import type { TestBroker } from '../../../rigs/broker/index.js';
import { machineTopics, type CommandName } from '../../../src/fleet/contract/topics.js';
import type { CommandReply } from '../../../src/fleet/contract/messages.js';
import { signCommand, testKey, writeTrustFile } from '../support/operator-keys.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const ACL_FILE = fileURLToPath(new URL('../../../../docs/fleet/mosquitto-acl.conf', import.meta.url));
const skip =
  process.env.QRVEND_TEST_BROKER === 'mosquitto'
    ? false
    : 'runs against mosquitto with the documented ACL only: npm run fleet-test (QRVEND_TEST_BROKER=mosquitto)';
const MACHINE = 'M-INTAKE-ACL';
const T = { skip, timeout: TEST_DEADLINE_MS };
const USERS = [
  { username: MACHINE, password: 'pw-machine-i1' },
  { username: 'qrvend-operator', password: 'pw-operator-i1' },
];
const FLOOD = 1_500;
const ops = testKey('ops', ['read', 'operate']);
const cfg = testKey('cfg', ['configure']);
const topics = machineTopics('qrvend', MACHINE);

let broker: TestBroker;
let rig: Rig;
let operator: MqttClient;
const replies = new Map<string, CommandReply>();
const health: Array<Record<string, any>> = [];

before(async () => {
  if (skip !== false) return;
  const { startMosquitto } = await import('../../../rigs/broker/mosquitto-broker.js');
  broker = await startMosquitto({ users: USERS, acl: readFileSync(ACL_FILE, 'utf8') });
  rig = await createRig({ vmc: { vendPolicy: 'manual' }, config: {} });
  const passwordFile = join(rig.dir, 'broker-password');
  writeFileSync(passwordFile, `${USERS[0]!.password}\n`, { mode: 0o600 });
  const site = JSON.parse(readFileSync(rig.configFile, 'utf8')) as Record<string, Record<string, unknown>>;
  site.fleet = {
    ...site.fleet,
    url: broker.url,
    topicPrefix: 'qrvend',
    machineId: MACHINE,
    protocolVersion: 5,
    username: MACHINE,
    passwordFile,
    healthIntervalS: 5,
    trustFile: writeTrustFile(rig.dir, [ops, cfg]),
  };
  writeFileSync(rig.configFile, JSON.stringify(site));
  operator = await mqtt.connectAsync(broker.url, {
    protocolVersion: 5,
    clientId: `operator-${randomUUID().slice(0, 8)}`,
    reconnectPeriod: 0,
    username: USERS[1]!.username,
    password: USERS[1]!.password,
  });
  operator.on('message', (topic, payload) => {
    const body = JSON.parse(payload.toString('utf8')) as Record<string, any>;
    if (topic === topics.health) health.push(body);
    if (topic === topics.replies && typeof body.correlationId === 'string')
      replies.set(body.correlationId, body as CommandReply);
  });
  await operator.subscribeAsync([topics.replies, topics.health, topics.status], { qos: 1 });
  await rig.startAgent();
  await rig.agent!.waitForLog((l) => l.event === 'fleet.connected', 15_000, 'the fleet link');
});

after(async () => {
  await operator?.endAsync(true);
  await rig?.close();
  await broker?.close();
});

/** Publishes the request on cmd/<name> as the operators' account (QoS 1) and waits for its reply. */
async function command(name: CommandName, args: unknown, signature: unknown): Promise<CommandReply> {
  const correlationId = randomUUID();
  const body = JSON.stringify({ replyTo: topics.replies, correlationId, args, signature });
  await operator.publishAsync(topics.command(name), body, { qos: 1 });
  await until(() => replies.has(correlationId), 20_000, `the reply to ${name}`);
  return replies.get(correlationId)!;
}

/** `count` QoS-0 pings whose signatures name key ids the machine does not trust (no key is held at all). */
function flood(round: number, from: number, count: number): void {
  for (let i = from; i < from + count; i++) {
    const signature = { ...signCommand(ops, MACHINE, 'ping', {}), keyId: `unknown-${round}-${i}` };
    const body = JSON.stringify({ replyTo: topics.replies, correlationId: `flood-${round}-${i}`, signature });
    operator.publish(topics.command('ping'), body, { qos: 0 });
  }
}

const hostEnabled = () => rig.vmc.state().hostEnabled;

test(
  "1,500 pings naming unknown keys, an operator's signed reader.disable, 1,500 more: it runs, 3 of 3",
  T,
  async (t) => {
    for (let round = 1; round <= 3; round++) {
      const sentAt = performance.now();
      flood(round, 0, FLOOD);
      const disable = command('reader.disable', {}, signCommand(ops, MACHINE, 'reader.disable', {}));
      flood(round, FLOOD, FLOOD);
      const reply = await disable;
      t.diagnostic(`round ${round}: the operator's reply after ${Math.round(performance.now() - sentAt)} ms`);
      assert.equal(reply.ok, true, `round ${round}: ${JSON.stringify(reply)}`);
      await until(() => !hostEnabled(), 10_000, `round ${round}: the reader disabled`);
      const enable = await command('reader.enable', {}, signCommand(ops, MACHINE, 'reader.enable', {}));
      assert.equal(enable.ok, true, `round ${round}: ${JSON.stringify(enable)}`);
      await until(() => hostEnabled(), 10_000, `round ${round}: the reader enabled again`);
    }
    // The flood was counted under its own share, and nothing the operator key sent was dropped.
    const fleet = () =>
      health.at(-1)?.stats?.fleet as
        { droppedBy?: Record<string, number>; byKey?: Record<string, { dropped: number }> } | undefined;
    await until(() => (fleet()?.droppedBy?.untrusted ?? 0) > 0, 15_000, 'health to count the dropped flood');
    assert.equal(fleet()?.droppedBy?.trusted ?? 0, 0, JSON.stringify(fleet()));
    t.diagnostic(`health: droppedBy ${JSON.stringify(fleet()?.droppedBy)}`);
    assert.equal(fleet()?.byKey?.ops?.dropped ?? 0, 0, JSON.stringify(fleet()));
  },
);

test('config.set naming __proto__ at the top level of set, signed with a configure key: refused', T, async () => {
  const args = { set: JSON.parse('{"__proto__":{"mdb":{"sessionIdleTimeoutMs":30000}}}') as Record<string, unknown> };
  const reply = await command('config.set', args, signCommand(cfg, MACHINE, 'config.set', args));
  assert.equal(!reply.ok && reply.error.code, 'BAD_ARGS', JSON.stringify(reply));
  assert.match(!reply.ok ? reply.error.message : '', /^args\.set\.__proto__: a member named "__proto__" is refused/);
  await new Promise((r) => setTimeout(r, 1_500)); // the time a restart took before
  assert.equal(rig.agent?.child.exitCode, null, 'the agent did not restart');
  assert.equal(existsSync(rig.overlayFile), false, 'no overlay written');
});
