import { test } from 'node:test';
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { startAedesBroker } from '../../../rigs/broker/index.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

test(
  'aedes broker relays a retained message, drops clients on stop and serves again on the same port',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const broker = await startAedesBroker();
    t.after(() => broker.close());
    const port = broker.port;
    const pub = await mqtt.connectAsync(broker.url, { protocolVersion: 4, reconnectPeriod: 0 });
    await pub.publishAsync('t/a', 'hello', { qos: 1, retain: true });
    const sub = await mqtt.connectAsync(broker.url, { protocolVersion: 4, reconnectPeriod: 0 });
    const got = new Promise<string>((resolve) => sub.once('message', (_topic, payload) => resolve(payload.toString())));
    await sub.subscribeAsync('t/a', { qos: 1 });
    assert.equal(await got, 'hello');

    const closed = new Promise<void>((resolve) => sub.once('close', () => resolve()));
    await broker.stop();
    await closed;
    await broker.start();
    assert.equal(broker.port, port);
    const again = await mqtt.connectAsync(broker.url, { protocolVersion: 4, reconnectPeriod: 0 });
    await again.endAsync();
    await pub.endAsync(true);
    await sub.endAsync(true);
  },
);
