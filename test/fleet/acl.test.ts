/**
 * The broker ACL that docs/fleet-operations.md shows (docs/fleet/mosquitto-acl.conf, loaded as it
 * is) confines each machine to its own prefix. Runs against Debian's mosquitto only (aedes has no
 * ACL files): `npm run fleet-test`. Order, not time, proves a message was never delivered: a
 * forbidden message is sent before an allowed one on the same path, and when the allowed one has
 * arrived, the forbidden one would have arrived first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import mqtt, { type MqttClient } from 'mqtt';
import { until } from '../../src/sim/wait.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const ACL_FILE = fileURLToPath(new URL('../../../docs/fleet/mosquitto-acl.conf', import.meta.url));
const onMosquitto = process.env.QRVEND_TEST_BROKER === 'mosquitto';
const skip = onMosquitto ? false : 'runs against mosquitto only: npm run fleet-test (QRVEND_TEST_BROKER=mosquitto)';

const USERS = [
  { username: 'vm-0001', password: 'pw-vm-0001-x7' },
  { username: 'vm-0002', password: 'pw-vm-0002-k2' },
  { username: 'qrvend-operator', password: 'pw-operator-q9' },
  { username: 'qrvend-relay', password: 'pw-relay-r4' },
];

function recorder(client: MqttClient): { topic: string; payload: string }[] {
  const got: { topic: string; payload: string }[] = [];
  client.on('message', (topic, payload) => got.push({ topic, payload: payload.toString() }));
  return got;
}

test(
  'the fleet ACL keeps each machine to its own prefix (mosquitto)',
  { skip, timeout: TEST_DEADLINE_MS },
  async (t) => {
    const { startMosquitto } = await import('../../rigs/broker/mosquitto-broker.js');
    const broker = await startMosquitto({ users: USERS, acl: readFileSync(ACL_FILE, 'utf8') });
    t.after(() => broker.close());
    const clients: MqttClient[] = [];
    t.after(async () => {
      for (const c of clients) await c.endAsync(true).catch(() => undefined);
    });
    const login = async (username: string, protocolVersion: 4 | 5 = 5) => {
      const user = USERS.find((u) => u.username === username)!;
      const c = await mqtt.connectAsync(broker.url, {
        protocolVersion,
        username,
        password: user.password,
        clientId: `acl-${username}-${protocolVersion}`,
        reconnectPeriod: 0,
      });
      clients.push(c);
      return c;
    };

    const operator = await login('qrvend-operator');
    const atOperator = recorder(operator);
    await operator.subscribeAsync('qrvend/#', { qos: 1 });
    const dev1 = await login('vm-0001');
    const atDev1 = recorder(dev1);
    const dev2 = await login('vm-0002', 4);
    const atDev2 = recorder(dev2);
    await dev2.publishAsync('qrvend/vm-0002/status', '{"real":true}', { qos: 1, retain: true });
    await until(
      () => atOperator.some((m) => m.topic === 'qrvend/vm-0002/status'),
      10_000,
      "vm-0002's own status at the operator",
    );

    await t.test("a machine cannot publish under another machine's prefix", async () => {
      // MQTT 5: the broker answers "Not authorized" (0x87) in the PUBACK; 3.1.1 has no way to say so.
      for (const topic of [
        'qrvend/vm-0002/status',
        'qrvend/vm-0002/events',
        'qrvend/vm-0002/replies',
        'qrvend/vm-0001/cmd/ping',
      ]) {
        await assert.rejects(
          dev1.publishAsync(topic, '{"online":false,"forged":true}', { qos: 1, retain: topic.endsWith('status') }),
          (err: unknown) => (err as { code?: number }).code === 0x87,
          topic,
        );
      }
      await dev2.publishAsync('qrvend/vm-0001/events', '{"forged":true}', { qos: 1 });
      await dev1.publishAsync('qrvend/vm-0001/events', '{"marker":1}', { qos: 1 });
      await until(
        () => atOperator.some((m) => m.payload === '{"marker":1}'),
        10_000,
        "vm-0001's own event at the operator",
      );
      assert.deepEqual(
        atOperator.filter((m) => m.payload.includes('forged')),
        [],
      );
      // The retained status of vm-0002 is still its own.
      const fresh = await login('qrvend-operator', 4);
      const atFresh = recorder(fresh);
      await fresh.subscribeAsync('qrvend/vm-0002/status', { qos: 1 });
      await until(() => atFresh.length > 0, 10_000, 'the retained status of vm-0002');
      assert.equal(atFresh[0]?.payload, '{"real":true}');
    });

    await t.test("a machine cannot subscribe to another machine's commands, nor read its status", async () => {
      // mosquitto 2.0 grants the subscription and checks each message against the ACL when it delivers.
      await dev1.subscribeAsync({
        'qrvend/vm-0002/cmd/+': { qos: 1 },
        'qrvend/+/cmd/+': { qos: 1 },
        'qrvend/vm-0002/status': { qos: 1 },
        'qrvend/vm-0001/cmd/+': { qos: 1 },
      });
      await dev2.subscribeAsync('qrvend/vm-0002/cmd/+', { qos: 1 });
      await operator.publishAsync('qrvend/vm-0002/cmd/ping', '{"correlationId":"for-vm-0002"}', { qos: 1 });
      await dev2.publishAsync('qrvend/vm-0002/status', '{"real":2}', { qos: 1, retain: true });
      await operator.publishAsync('qrvend/vm-0001/cmd/ping', '{"correlationId":"for-vm-0001"}', { qos: 1 });
      await until(
        () => atDev1.some((m) => m.payload.includes('for-vm-0001')),
        10_000,
        'vm-0001 receiving its own command',
      );
      await until(
        () => atDev2.some((m) => m.payload.includes('for-vm-0002')),
        10_000,
        'vm-0002 receiving its own command',
      );
      // Its own command, once per matching subscription (own filter and the wildcard): nothing of vm-0002's.
      assert.deepEqual([...new Set(atDev1.map((m) => m.topic))], ['qrvend/vm-0001/cmd/ping']);
      assert.equal(
        atDev1.some((m) => m.payload.includes('vm-0002') || m.payload.includes('real')),
        false,
      );
    });

    await t.test(
      'a machine may write its own probe (cmd/_probe) and hears it ' +
        "back; no other command topic, no other machine's probe",
      async () => {
        await dev1.subscribeAsync('qrvend/vm-0001/cmd/+', { qos: 1 });
        await assert.rejects(
          dev1.publishAsync('qrvend/vm-0002/cmd/_probe', '{"probe":"forged"}', { qos: 1 }),
          (err: unknown) => (err as { code?: number }).code === 0x87,
        );
        await assert.rejects(
          dev1.publishAsync('qrvend/vm-0001/cmd/config.set', '{"forged":true}', { qos: 1 }),
          (err: unknown) => (err as { code?: number }).code === 0x87,
        );
        await dev1.publishAsync('qrvend/vm-0001/cmd/_probe', '{"probe":"own-1"}', { qos: 1 });
        await until(
          () => atDev1.some((m) => m.topic === 'qrvend/vm-0001/cmd/_probe' && m.payload.includes('own-1')),
          10_000,
          'vm-0001 hearing its own probe',
        );
        assert.equal(
          atDev2.some((m) => m.payload.includes('forged')),
          false,
        );
        assert.equal(
          atDev1.some((m) => m.payload.includes('forged')),
          false,
        );
      },
    );

    await t.test(
      'the relay user reads statuses and replies and writes Starts and their confirmations, nothing else ' +
        '(docs/decisions/fleet-trust.md)',
      async () => {
        const relay = await login('qrvend-relay');
        const atRelay = recorder(relay);
        await relay.subscribeAsync({
          'qrvend/+/status': { qos: 1 },
          'qrvend/+/replies': { qos: 1 },
          'qrvend/+/events': { qos: 1 },
          'qrvend/+/cmd/+': { qos: 1 },
        });
        // Commands other than start and start.confirm, a machine's own topics: "Not authorized".
        for (const topic of [
          'qrvend/vm-0001/cmd/config.set',
          'qrvend/vm-0001/cmd/service.restart',
          'qrvend/vm-0001/cmd/reader.disable',
          'qrvend/vm-0001/status',
          'qrvend/vm-0001/replies',
        ]) {
          await assert.rejects(
            relay.publishAsync(topic, '{"correlationId":"from-relay","args":{"set":{"log":{"level":"silent"}}}}', {
              qos: 1,
            }),
            (err: unknown) => (err as { code?: number }).code === 0x87,
            topic,
          );
        }
        await relay.publishAsync('qrvend/vm-0001/cmd/start', '{"correlationId":"relay-start"}', { qos: 1 });
        await relay.publishAsync('qrvend/vm-0001/cmd/start.confirm', '{"args":{"marker":"relay-confirm"}}', { qos: 1 });
        await until(
          () => atDev1.some((m) => m.payload.includes('relay-confirm')),
          10_000,
          'the confirmation at vm-0001',
        );
        assert.ok(
          atDev1.some((m) => m.payload.includes('relay-start')),
          'the Start at vm-0001',
        );
        assert.ok(
          !atDev1.some((m) => m.payload.includes('from-relay')),
          'no other command from the relay reached the machine',
        );
        // It reads statuses and replies, and not the machines' events (sales) or other clients' commands.
        await dev2.publishAsync('qrvend/vm-0002/events', '{"sale":"not for the relay"}', { qos: 1 });
        await dev2.publishAsync('qrvend/vm-0002/replies', '{"reply":"for the relay"}', { qos: 1 });
        await until(() => atRelay.some((m) => m.payload.includes('for the relay')), 10_000, 'a reply at the relay');
        assert.ok(
          atRelay.some((m) => m.topic === 'qrvend/vm-0002/status'),
          'the retained status at the relay',
        );
        assert.ok(!atRelay.some((m) => m.payload.includes('not for the relay')), 'no event at the relay');
      },
    );

    await t.test('anonymous clients and wrong passwords are refused', async () => {
      await assert.rejects(
        mqtt.connectAsync(broker.url, { protocolVersion: 5, reconnectPeriod: 0, clientId: 'acl-anon' }, false),
        /Not authorized|Bad User Name or Password|Connection refused/,
      );
      await assert.rejects(
        mqtt.connectAsync(
          broker.url,
          { protocolVersion: 4, reconnectPeriod: 0, clientId: 'acl-bad', username: 'vm-0001', password: 'wrong' },
          false,
        ),
        /Not authorized|Bad username or password|Connection refused/,
      );
    });
  },
);
