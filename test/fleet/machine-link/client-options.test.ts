/**
 * The fleet worker's MQTT client options (src/fleet/machine-link/client-options.ts), and what the
 * memory one does to a real mqtt.js client on a real broker: mqtt-packet's per-packet-id Buffer
 * cache (65,536 Buffers, 6-7 MB of the worker's heap) is never built.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { connect } from 'mqtt';
import { readJsonFile, DEFAULT_CONFIG_PATH, validateConfig, layer } from '../../../src/config/load.js';
import { deviceClientOptions } from '../../../src/fleet/machine-link/client-options.js';
import { startAedesBroker } from '../../../rigs/broker/index.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const config = validateConfig(
  layer(readJsonFile(DEFAULT_CONFIG_PATH, 'defaults'), { fleet: { url: 'mqtt://127.0.0.1:1883', machineId: 'M-OPT' } }),
  'test',
);

test('the options: the machine names the client and its will, reconnects spread over a second, no number cache', () => {
  const low = deviceClientOptions(config.fleet, 'M-OPT', 'qrvend/M-OPT/status', () => 0);
  const high = deviceClientOptions(config.fleet, 'M-OPT', 'qrvend/M-OPT/status', () => 0.9999);
  assert.equal(low.clientId, 'qrvend-M-OPT');
  assert.equal(low.will?.topic, 'qrvend/M-OPT/status');
  assert.deepEqual(JSON.parse(String(low.will?.payload)), { online: false });
  assert.equal(low.will?.retain, true);
  assert.equal(low.reconnectPeriod, 1000);
  assert.equal(high.reconnectPeriod, 1999);
  assert.equal(low.writeCache, false);
  assert.equal(low.rejectUnauthorized, true);
  // A machine id at the bound still gives a client id within MQTT's 128 characters here.
  assert.equal(deviceClientOptions(config.fleet, 'M'.repeat(200), 't').clientId!.length, 128);
});

test(
  'a client with these options publishes and is acknowledged without building the packet-id cache',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    // mqtt-packet as mqtt.js itself resolves it (its own dependency, not ours).
    const numbers = createRequire(createRequire(import.meta.url).resolve('mqtt'))('mqtt-packet/numbers') as {
      cache: Record<number, Buffer>;
    };
    assert.equal(Object.keys(numbers.cache).length, 0, 'nothing in this process built it yet');
    const broker = await startAedesBroker();
    const client = connect(broker.url, {
      ...deviceClientOptions({ ...config.fleet, url: broker.url, protocolVersion: 4 }, 'M-OPT', 'qrvend/M-OPT/status'),
      reconnectPeriod: 0,
    });
    try {
      await new Promise<void>((resolve, reject) => {
        client.once('connect', () => resolve());
        client.once('error', reject);
      });
      // QoS 1 publishes carry packet ids: the ones the cache would have served.
      for (let i = 0; i < 3; i++) await client.publishAsync(`qrvend/M-OPT/events`, `event ${i}`, { qos: 1 });
      assert.equal(Object.keys(numbers.cache).length, 0, 'the 65,536-entry cache was built');
    } finally {
      await client.endAsync(true);
      await broker.close();
    }
  },
);
