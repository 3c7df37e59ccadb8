/**
 * FleetDeviceLink without a thread: the machine's end of the fleet link driven in-process against a
 * real aedes broker on loopback, with the payment worker's end a real MessageChannel and the main
 * thread and the clocks as fakes. Status, events, a command served by the payment side, the stop.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { connect, type MqttClient } from 'mqtt';
import { startAedesBroker } from '../../../rigs/broker/index.js';
import { loadConfig } from '../../../src/config/load.js';
import { silentLogger } from '../../../src/core/log.js';
import { machineTopics } from '../../../src/fleet/contract/topics.js';
import { FleetDeviceLink } from '../../../src/fleet/machine-link/link.js';
import type { FleetFacts, FleetToMain, FleetToPayment } from '../../../src/ipc/messages.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

/** Whatever arrives, kept in order; waitFor gives up after its deadline with what it waited for. */
class Inbox<T> {
  private readonly items: T[] = [];
  private readonly waiters: { match: (item: T) => boolean; resolve: (item: T) => void }[] = [];

  push(item: T): void {
    this.items.push(item);
    for (const waiter of [...this.waiters]) {
      if (!waiter.match(item)) continue;
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(item);
    }
  }

  waitFor(match: (item: T) => boolean, what: string, deadlineMs = 10_000): Promise<T> {
    const seen = this.items.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`waited ${deadlineMs} ms for ${what}`)), deadlineMs);
      this.waiters.push({ match, resolve: (item) => (clearTimeout(timer), resolve(item)) });
    });
  }
}

const MACHINE_ID = 'vm-7';
const FACTS: FleetFacts = {
  reader: 'enabled', //                  the reader is up and idle
  readerDisabledRemotely: false,
  gateway: 'online',
  outbox: { pending: 0, dead: 0 },
  alarms: [], //                         nothing raised
  queued: { sales: 0, alarms: 0, dropped: 0 },
};

const TITLE = 'the fleet link runs in-process: status, events acknowledged, a payment-side command, a clean stop';
test(TITLE, { timeout: TEST_DEADLINE_MS }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-fleet-link-'));
  const broker = await startAedesBroker();
  const channel = new MessageChannel();
  let observer: MqttClient | null = null;
  t.after(async () => {
    await observer?.endAsync(true);
    channel.port2.close();
    await broker.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const base = loadConfig({ env: {} }).config;
  const config = {
    ...base,
    store: { ...base.store, path: join(dir, 'ledger.db') },
    updates: { ...base.updates, dir: join(dir, 'updates') },
    fleet: {
      ...base.fleet,
      url: broker.url,
      protocolVersion: 4 as const,
      machineId: MACHINE_ID,
      configOverlay: join(dir, 'fleet-overlay.json'),
      trustFile: null,
      allowUnsignedReads: true, // outbox.list needs no signature here
      healthIntervalS: 3_600,
    },
  };
  const topics = machineTopics(config.fleet.topicPrefix, MACHINE_ID);
  const seen = new Inbox<{ topic: string; text: string; retain: boolean }>();
  observer = connect(broker.url, { protocolVersion: 4 });
  observer.on('message', (topic, payload, packet) =>
    seen.push({ topic, text: payload.toString('utf8'), retain: packet.retain }),
  );
  await observer.subscribeAsync(`${config.fleet.topicPrefix}/${MACHINE_ID}/#`, { qos: 1 });

  const toMain = new Inbox<FleetToMain>();
  const toPayment = new Inbox<FleetToPayment>();
  channel.port2.on('message', (message: FleetToPayment) => toPayment.push(message));
  let clockMs = 1_000_000;
  const data = {
    config,
    machineId: MACHINE_ID,
    terminalId: 'T-7',
    configFile: null,
    version: '1.2.3',
    startedAt: '2026-01-01T00:00:00.000Z',
    paymentPort: channel.port1,
    probe: false,
    logFile: null,
  };
  const link = new FleetDeviceLink(data, {
    connectMqtt: connect,
    toMain: (m) => toMain.push(m),
    payment: channel.port1,
    log: silentLogger(),
    monotonicNow: () => clockMs,
    wallNow: () => 1_767_225_600_000, // 2026-01-01T00:00:00Z
  });
  link.start();

  await toMain.waitFor((m) => m.type === 'fleet.link' && m.connected, 'fleet.link connected to the main thread');
  const want = await toPayment.waitFor((m) => m.type === 'fleet.events.want', 'a pull of the queued events');
  assert.deepEqual(want, { type: 'fleet.events.want', afterSeq: 0, max: 32 });

  channel.port2.postMessage({ type: 'fleet.facts', facts: FACTS });
  const status = await seen.waitFor((m) => m.topic === topics.status, 'a status message');
  // Retained: a subscriber that comes later still gets it (delivered with the retain flag).
  const late = connect(broker.url, { protocolVersion: 4 });
  t.after(() => late.endAsync(true));
  const retained = new Promise<boolean>((resolve) => late.on('message', (_t, _p, packet) => resolve(packet.retain)));
  await late.subscribeAsync(topics.status, { qos: 1 });
  assert.equal(await retained, true);
  assert.deepEqual(
    { ...JSON.parse(status.text), at: null },
    {
      ...JSON.parse(status.text),
      online: true,
      machineId: MACHINE_ID,
      terminalId: 'T-7',
      version: '1.2.3',
      reader: 'enabled',
      at: null,
    },
  );

  channel.port2.postMessage({ type: 'fleet.events', events: [{ seq: 1, body: '{"kind":"sale"}' }] });
  const event = await seen.waitFor((m) => m.topic === topics.events, 'the event on the events topic');
  assert.equal(event.text, '{"kind":"sale"}');
  const acked = await toPayment.waitFor(
    (m) => m.type === 'fleet.events.acked',
    'the acknowledgement to the payment side',
  );
  assert.deepEqual(acked, { type: 'fleet.events.acked', seqs: [1] });

  // A read command the payment side serves: asked over the channel, its answer published as the reply.
  observer.publish(topics.command('outbox.list'), JSON.stringify({ correlationId: 'c-1', args: {} }), { qos: 1 });
  const asked = await toPayment.waitFor((m) => m.type === 'fleet.command', 'the command handed to the payment side');
  assert.equal(asked.type === 'fleet.command' && asked.name, 'outbox.list');
  if (asked.type !== 'fleet.command') return;
  channel.port2.postMessage({ type: 'fleet.reply', id: asked.id, ok: true, result: { rows: [] } });
  const reply = await seen.waitFor((m) => m.topic === topics.replies, 'the reply on the replies topic');
  const expected = {
    ok: true,
    machineId: MACHINE_ID,
    command: 'outbox.list',
    correlationId: 'c-1',
    result: { rows: [] },
  };
  assert.deepEqual(JSON.parse(reply.text), expected);

  link.fromMain({ type: 'fleet.stats', stats: { reader: 'enabled' } });
  await toMain.waitFor((m) => m.type === 'fleet.memory', 'the fleet worker heap figures');

  clockMs += 5_000;
  link.fromMain({ type: 'shutdown' });
  await toMain.waitFor((m) => m.type === 'stopped', 'stopped to the main thread');
  const offline = (m: { topic: string; text: string }) =>
    m.topic === topics.status && JSON.parse(m.text).online === false;
  const goodbye = await seen.waitFor(offline, 'the goodbye status');
  assert.deepEqual(JSON.parse(goodbye.text), { online: false });
});
