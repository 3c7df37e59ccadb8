import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import mqtt from 'mqtt';
import { startMosquitto } from '../../../rigs/broker/mosquitto-broker.js';
import { until } from '../../../src/sim/wait.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const skip =
  process.env.QRVEND_TEST_BROKER === 'mosquitto'
    ? false
    : 'runs against mosquitto only: npm run fleet-test (QRVEND_TEST_BROKER=mosquitto)';

test(
  'without the mosquitto binary: an error naming it and the package to install',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    await assert.rejects(
      startMosquitto({ bin: '/nonexistent/sbin/mosquitto' }),
      /mosquitto not found at \/nonexistent\/sbin\/mosquitto: install the Debian package `mosquitto`/,
    );
  },
);

async function retained(url: string, topic: string, protocolVersion: 4 | 5): Promise<string | null> {
  const c = await mqtt.connectAsync(url, { protocolVersion, reconnectPeriod: 0 });
  try {
    let got: string | null = null;
    c.on('message', (t, p) => {
      if (t === topic) got = p.toString();
    });
    await c.subscribeAsync(topic, { qos: 1 });
    // A marker published after the subscription arrives after any retained message (one queue per client).
    await c.subscribeAsync(`${topic}/marker`, { qos: 1 });
    let marker = false;
    c.on('message', (t) => (marker ||= t === `${topic}/marker`));
    await c.publishAsync(`${topic}/marker`, 'm', { qos: 1 });
    await until(() => marker, 10_000, 'the marker');
    return got;
  } finally {
    await c.endAsync(true);
  }
}

test(
  'mosquitto on a loopback port: MQTT 5 and 3.1.1, stop and start on the same port, close removes everything',
  { skip, timeout: TEST_DEADLINE_MS },
  async (t) => {
    const broker = await startMosquitto();
    t.after(() => broker.close());
    assert.match(broker.url, /^mqtt:\/\/127\.0\.0\.1:\d+$/);
    const v5 = await mqtt.connectAsync(broker.url, { protocolVersion: 5, reconnectPeriod: 0 });
    await v5.publishAsync('t/r', 'kept?', { qos: 1, retain: true, properties: { messageExpiryInterval: 60 } });
    assert.equal(await retained(broker.url, 't/r', 4), 'kept?');
    const closed = new Promise<void>((resolve) => v5.once('close', () => resolve()));
    const port = broker.port;
    const pid = broker.pid;
    await broker.stop();
    await closed;
    assert.equal(broker.pid, null);
    await broker.start();
    assert.equal(broker.port, port);
    assert.notEqual(broker.pid, pid);
    // No persistence: a restart forgets retained messages, like a broker without a store.
    assert.equal(await retained(broker.url, 't/r', 5), null);
    await v5.endAsync(true);
    const dir = broker.configDir;
    assert.equal(existsSync(dir), true);
    await broker.close();
    assert.equal(existsSync(dir), false);
  },
);

test(
  'mosquitto with persistence keeps retained messages across stop and start',
  { skip, timeout: TEST_DEADLINE_MS },
  async (t) => {
    const broker = await startMosquitto({ persistence: true });
    t.after(() => broker.close());
    const c = await mqtt.connectAsync(broker.url, { protocolVersion: 5, reconnectPeriod: 0 });
    await c.publishAsync('t/p', 'persisted', { qos: 1, retain: true });
    await c.endAsync();
    await broker.stop();
    await broker.start();
    assert.equal(await retained(broker.url, 't/p', 5), 'persisted');
  },
);
