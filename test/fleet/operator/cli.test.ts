/**
 * The operator CLI against a real broker (aedes in `npm test`, mosquitto in `npm run fleet-test`)
 * and simulated machines that speak the contract: `fleet status` shows them, a malformed retained
 * status is skipped and counted, `fleet watch` prints live events, `fleet cmd` gets the reply
 * (exit 0), an error reply (exit 1), no reply (exit 69).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { startTestBroker } from '../../../rigs/broker/index.js';
import { SimulatedMachine } from '../../../rigs/fleet/machine.js';
import { until } from '../../../src/sim/wait.js';
import { runCli, startCli } from './run-cli.js';

test('fleet status, watch and cmd against a real broker and simulated machines', { timeout: 300_000 }, async (t) => {
  const broker = await startTestBroker();
  t.after(() => broker.close());
  const v5 = broker.protocolVersions.includes(5);
  const machines: SimulatedMachine[] = [];
  t.after(async () => {
    for (const m of machines) await m.client.endAsync(true).catch(() => undefined);
  });
  const m1 = await SimulatedMachine.connect({
    url: broker.url,
    machineId: 'vm-0001',
    protocol: v5 ? 5 : 4,
    handlers: {
      'config.get': (args) =>
        (args as { key?: string } | undefined)?.key === 'gateway.timeoutMs'
          ? { ok: true, result: { value: 8000 } }
          : { ok: false, code: 'BAD_ARGS', message: 'no such key' },
    },
  });
  machines.push(m1);
  // A machine on MQTT 3.1.1 answers through the body's replyTo/correlationId even when the operator speaks 5.
  const m2 = await SimulatedMachine.connect({ url: broker.url, machineId: 'vm-0002', protocol: 4 });
  machines.push(m2);
  await m2.alarm('GATEWAY_UNREACHABLE', 'raised', 'gateway timeouts since 04:00');
  await m2.publishStatus({ outbox: { pending: 4, dead: 1 }, gateway: 'offline' });
  const m3 = await SimulatedMachine.connect({ url: broker.url, machineId: 'vm-0003', protocol: 4 });
  machines.push(m3);
  // A power cut: the broker publishes vm-0003's last will. Seen by a subscriber before going on.
  const probe = await mqtt.connectAsync(broker.url, { protocolVersion: 4, reconnectPeriod: 0 });
  t.after(() => probe.endAsync(true));
  let offline = false;
  probe.on('message', (topic, payload) => {
    if (topic === 'qrvend/vm-0003/status' && payload.toString() === '{"online":false}') offline = true;
  });
  await probe.subscribeAsync('qrvend/vm-0003/status', { qos: 1 });
  m3.crash();
  await until(() => offline, 10_000, "vm-0003's last will");
  // A malformed retained status from something on the broker.
  await probe.publishAsync('qrvend/vm-0666/status', '{"online": true, "reader": "\u001b[2J', { qos: 1, retain: true });
  await probe.publishAsync('qrvend/vm-0667/status', JSON.stringify({ online: 'maybe' }), { qos: 1, retain: true });

  const url = ['--url', broker.url];

  await t.test('fleet status: a table with every machine and the malformed statuses counted', async () => {
    const r = await runCli(['fleet', 'status', ...url]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.match(lines[0] ?? '', /^MACHINE +ONLINE +VERSION +READER +GATEWAY +LAST SALE +OUTBOX p\/d +UPDATE +ALARMS$/);
    assert.match(r.stdout, /^vm-0001 +yes +sim +enabled +online +- +0\/0 +- +-$/m);
    assert.match(r.stdout, /^vm-0002 +yes +sim +enabled +offline +- +4\/1 +- +GATEWAY_UNREACHABLE$/m);
    assert.match(r.stdout, /^vm-0003 +NO +.*\(offline: last will\)$/m);
    assert.doesNotMatch(r.stdout, /vm-066[67]/);
    assert.match(r.stdout, /^3 machines: 2 online, 1 offline, 1 with alarms, 1 dead-lettered payment$/m);
    assert.match(r.stdout, /^2 malformed messages skipped \(not-json 1, schema 1\)$/m);

    const j = await runCli(['fleet', 'status', '--json', ...url]);
    assert.equal(j.code, 0, j.stderr);
    const parsed = JSON.parse(j.stdout) as { machines: { machineId: string }[]; malformed: { total: number } };
    assert.deepEqual(
      parsed.machines.map((m) => m.machineId),
      ['vm-0001', 'vm-0002', 'vm-0003'],
    );
    assert.equal(parsed.malformed.total, 2);
  });

  await t.test('fleet watch: live events, one line each; NDJSON with --json', async () => {
    const watch = startCli(['fleet', 'watch', '--count', '2', ...url]);
    try {
      await until(() => watch.err().includes('watching qrvend/+/events'), 30_000, 'fleet watch to subscribe');
      await m1.sale({ txId: 'tx-live-1', amount: '2.50' }).acked;
      await m2.alarm('GATEWAY_UNREACHABLE', 'cleared');
      assert.equal(await watch.exited, 0, watch.err());
    } finally {
      watch.child.kill();
    }
    const lines = watch.out().trim().split('\n');
    assert.equal(lines.length, 2, watch.out());
    assert.match(
      lines[0] ?? '',
      /^\S+ \S+  vm-0001 {7}sale   2\.50 ILS  static settlement accepted  tx tx-live-1  items 12:vended$/,
    );
    assert.match(lines[1] ?? '', /^\S+ \S+  vm-0002 {7}alarm  cleared GATEWAY_UNREACHABLE$/);

    const json = startCli(['fleet', 'watch', '--json', '--count', '1', '--no-presence', ...url]);
    try {
      await until(() => json.err().includes('watching'), 30_000, 'fleet watch --json to subscribe');
      await m1.sale({ txId: 'tx-live-2' }).acked;
      assert.equal(await json.exited, 0, json.err());
    } finally {
      json.child.kill();
    }
    const record = JSON.parse(json.out()) as {
      type: string;
      machineId: string;
      event: { txId: string; eventId: string };
    };
    assert.equal(record.type, 'event');
    assert.equal(record.machineId, 'vm-0001');
    assert.equal(record.event.txId, 'tx-live-2');
  });

  await t.test(
    'fleet watch --session: events published while the watcher was away arrive when it is back',
    async () => {
      const first = await runCli(['fleet', 'watch', '--session', 'billing', '--seconds', '1', '--no-presence', ...url]);
      assert.equal(first.code, 0, first.stderr);
      await m1.sale({ txId: 'tx-while-away' }).acked;
      const back = await runCli([
        'fleet',
        'watch',
        '--session',
        'billing',
        '--count',
        '1',
        '--json',
        '--no-presence',
        ...url,
      ]);
      assert.equal(back.code, 0, back.stderr);
      const record = JSON.parse(back.stdout.trim().split('\n')[0] ?? '') as { event: { txId: string } };
      assert.equal(record.event.txId, 'tx-while-away');
    },
  );

  await t.test(
    'fleet cmd: a reply (exit 0), an error reply (exit 1), a 3.1.1 machine, no reply (exit 69)',
    async () => {
      const ping = await runCli(['fleet', 'cmd', 'vm-0001', 'ping', ...url]);
      assert.equal(ping.code, 0, ping.stderr);
      assert.match(ping.stdout, /^vm-0001 ping: ok \(\d+ ms\)\n\{\n {2}"pong": true,/);

      const get = await runCli([
        'fleet',
        'cmd',
        'vm-0001',
        'config.get',
        '{"key":"gateway.timeoutMs"}',
        '--json',
        ...url,
      ]);
      assert.equal(get.code, 0, get.stderr);
      assert.deepEqual((JSON.parse(get.stdout) as { result: unknown }).result, { value: 8000 });

      const refused = await runCli(['fleet', 'cmd', 'vm-0001', 'config.get', '{"key":"nope"}', ...url]);
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stdout, /^vm-0001 config.get: error BAD_ARGS: no such key/);

      const unknown = await runCli(['fleet', 'cmd', 'vm-0002', 'doctor', '--protocol', v5 ? '5' : '4', ...url]);
      assert.equal(unknown.code, 1, unknown.stderr);
      assert.match(unknown.stdout, /^vm-0002 doctor: error UNKNOWN_COMMAND/);
      assert.equal(m2.repliesSent >= 1, true);

      const silent = await runCli(['fleet', 'cmd', 'vm-0003', 'ping', '--timeout', '500', ...url]);
      assert.equal(silent.code, 69, silent.stderr);
      assert.match(
        silent.stderr,
        new RegExp(
          /FLEET_NO_REPLY: no reply from vm-0003 to ping within 500 ms /.source +
            /\(its retained status says OFFLINE \(last will\)\)/.source,
        ),
      );

      const bad = await runCli(['fleet', 'cmd', 'vm-0001', 'outbox.retry', '{"id":0}', ...url]);
      assert.equal(bad.code, 64);
      assert.match(bad.stderr, /CLI_USAGE: arguments of outbox.retry refused: id/);
    },
  );

  await t.test('the broker from QRVEND_FLEET_URL; none at all is a usage error', async () => {
    const r = await runCli(['fleet', 'status', '--json'], 30_000, { QRVEND_FLEET_URL: broker.url });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { machines: unknown[] }).machines.length, 3);
    const none = await runCli(['fleet', 'status']);
    assert.equal(none.code, 64);
    assert.match(none.stderr, /CLI_USAGE: no broker: give --url or set QRVEND_FLEET_URL/);
  });

  await t.test('no broker: a clear error naming it, exit 69', async () => {
    const closed = await startTestBroker();
    const deadUrl = closed.url;
    await closed.close();
    const r = await runCli(['fleet', 'status', '--url', deadUrl, '--connect-timeout', '2000']);
    assert.equal(r.code, 69);
    assert.match(
      r.stderr,
      new RegExp(`FLEET_BROKER_UNREACHABLE: cannot connect to the broker at ${deadUrl.replace(/[.]/g, '\\.')}`),
    );
  });
});
