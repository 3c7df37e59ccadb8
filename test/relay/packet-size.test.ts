/**
 * docs/decisions/fleet-trust.md item 11: a status far over the contract's 64 KiB on a machine's own topic (8 MiB here;
 * 200 MB took the relay from 91 to 535 MiB) must not reach the relay or `qrvend fleet status`
 * whole. The payload is a valid status followed by 8 MiB of spaces, so it is still valid JSON:
 * only the size check stands between it and the relay's map.
 *
 * - MQTT 5 (mosquitto, `npm run fleet-test`): the clients announce a Maximum Packet Size and
 *   the broker does not deliver it at all (nothing was cut on our side).
 * - MQTT 3.1.1 (aedes, `npm test`; aedes ignores the property anyway): the packet bound cuts it
 *   as it streams in (test/fleet/packet-bound.test.ts shows it holds no more than the header),
 *   once per delivery, and the relay stays connected: a relay that subscribes later and gets the
 *   retained 8 MiB status at once is not thrown into a reconnect loop.
 * Either way the machine is not mapped and the others are.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import type { StatusMessage } from '../../src/fleet/contract/index.js';
import { runCli } from '../fleet/operator/run-cli.js';
import { createRelayRig, until } from './support/relay-rig.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const BIG = 8 * 1024 * 1024;

function status(machineId: string): StatusMessage {
  return {
    online: true,
    machineId,
    terminalId: machineId,
    uniQr: null,
    version: 'test',
    startedAt: '2026-11-26T00:00:00.000Z',
    reader: 'enabled',
    readerDisabledRemotely: false,
    gateway: 'online',
    outbox: { pending: 0, dead: 0 },
    alarms: [],
    acceptsRelayedStart: true,
    at: '2026-11-26T00:00:00.000Z',
  };
}

test(
  'an 8 MiB retained status is never delivered whole to the relay or the CLI; the relay stays connected',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const rig = await createRelayRig();
    t.after(() => rig.close());
    const v5 = rig.protocolVersion === 5;
    const relay = await rig.startRelay();
    const publisher = await mqtt.connectAsync(rig.broker.url, {
      protocolVersion: rig.protocolVersion,
      reconnectPeriod: 0,
      clientId: 'qrvend-M-BIG',
    });
    t.after(() => publisher.endAsync(true));
    const publishStatus = (machineId: string, payload: string) =>
      publisher.publishAsync(`qrvend/${machineId}/status`, payload, { qos: 1, retain: true });

    await publishStatus('M-OK-1', JSON.stringify(status('M-OK-1')));
    await until(() => relay.link.stats().machines === 1, 10_000, 'the relay to map M-OK-1');
    // On its own topic, a valid status padded to 8 MiB: valid JSON, valid schema, only too large.
    await publishStatus('M-BIG', JSON.stringify(status('M-BIG')) + ' '.repeat(BIG));
    // Delivered in order after the big one (same publisher, same subscription).
    await publishStatus('M-OK-2', JSON.stringify(status('M-OK-2')));
    await until(() => relay.link.stats().machines === 2, 30_000, 'the relay to map M-OK-2');

    const stats = relay.link.stats();
    assert.equal(relay.link.directory.find('M-BIG', undefined).kind, 'unknown');
    assert.equal(stats.statusDropped.invalid, 0);
    // MQTT 5: the broker kept it from us. 3.1.1: it came, and was cut before being buffered.
    assert.equal(stats.packetsTooLarge, v5 ? 0 : 1);
    assert.equal(stats.connected, true);

    // A relay that starts now gets the retained 8 MiB status at subscription.
    const late = await rig.startRelay();
    await until(() => late.link.stats().machines === 2, 30_000, 'the late relay to map both machines');
    assert.equal(late.link.stats().packetsTooLarge, v5 ? 0 : 1);
    assert.equal(late.link.directory.find('M-BIG', undefined).kind, 'unknown');
    const connects = rig.logs.filter((line) => line.includes('connected to the fleet broker')).length;
    assert.equal(connects, 2, 'one connect per relay: no reconnect loop');

    const cli = await runCli(['fleet', 'status', '--json', '--url', rig.broker.url]);
    assert.equal(cli.code, 0, cli.stderr);
    const seen = JSON.parse(cli.stdout) as {
      machines: { machineId: string }[];
      malformed: { total: number; byReason: Record<string, number> };
    };
    assert.deepEqual(
      seen.machines.map((m) => m.machineId),
      ['M-OK-1', 'M-OK-2'],
    );
    assert.deepEqual(seen.malformed.byReason, v5 ? {} : { 'too-large': 1 });
  },
);
