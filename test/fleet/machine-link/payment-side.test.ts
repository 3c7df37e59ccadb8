/**
 * The fleet link's end in the payment worker, over a real MessageChannel and a real ledger file:
 * events handed out and deleted on acknowledgement, the commands it serves, out of service kept
 * across a restart, an alarm written as an event.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { FleetPaymentSide } from '../../../src/fleet/machine-link/payment-side.js';
import { silentLogger } from '../../../src/core/log.js';
import { monotonicNow } from '../../../src/core/clock.js';
import type { FleetToPayment, PaymentToFleet, PaymentToMain } from '../../../src/ipc/messages.js';
import { ManualClock, openTest, tempLedgerPath } from '../../ledger/helpers.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

function harness(path: string) {
  const clock = new ManualClock();
  const ledger = openTest(path, clock);
  ledger.fleetEvents.enable({ machineId: 'M1', currencyCode: 'EUR', maxQueuedAlarms: 100 });
  const channel = new MessageChannel();
  const toMain: PaymentToMain[] = [];
  const received: PaymentToFleet[] = [];
  const fleetEnd: MessagePort = channel.port2;
  fleetEnd.on('message', (m: PaymentToFleet) => received.push(m));
  const side = new FleetPaymentSide({
    port: channel.port1,
    ledger,
    log: silentLogger(),
    toMain: (m) => toMain.push(m),
    monotonicNow,
    kickOutbox: () => {},
  });
  const send = (m: FleetToPayment) => fleetEnd.postMessage(m);
  const next = async <K extends PaymentToFleet['type']>(
    type: K,
    match: (m: Extract<PaymentToFleet, { type: K }>) => boolean = () => true,
  ) => {
    for (let i = 0; i < 300; i++) {
      const found = received.find((m) => m.type === type && match(m as Extract<PaymentToFleet, { type: K }>));
      if (found) {
        received.splice(received.indexOf(found), 1);
        return found as Extract<PaymentToFleet, { type: K }>;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no ${type} from the payment side`);
  };
  let nextId = 1;
  const command = async (name: string, args: unknown = {}) => {
    const id = nextId++;
    send({ type: 'fleet.command', id, name, args });
    return next('fleet.reply', (m) => m.id === id);
  };
  const close = () => {
    side.close();
    channel.port1.close();
    fleetEnd.close();
    ledger.close();
  };
  return { ledger, side, toMain, send, next, command, close };
}

test('queued events are handed out oldest first and deleted only when acknowledged', T, async () => {
  const tmp = tempLedgerPath();
  const h = harness(tmp.path);
  try {
    const a = h.ledger.fleetEvents.recordAlarm({ code: 'READER_OFFLINE', state: 'raised', detail: null });
    const b = h.ledger.fleetEvents.recordAlarm({ code: 'READER_OFFLINE', state: 'cleared', detail: null });
    await h.next('fleet.events.available');
    h.send({ type: 'fleet.events.want', afterSeq: 0, max: 10 });
    const batch = await h.next('fleet.events');
    assert.deepEqual(
      batch.events.map((e) => e.eventId),
      [a, b],
    );
    h.send({ type: 'fleet.events.acked', seqs: [batch.events[0]!.seq] });
    h.send({ type: 'fleet.events.want', afterSeq: 0, max: 10 });
    assert.deepEqual(
      (await h.next('fleet.events')).events.map((e) => e.eventId),
      [b],
      'the acknowledged one is gone, the other kept',
    );
  } finally {
    h.close();
    tmp.cleanup();
  }
});

test(
  'commands: outbox.list, outbox.retry with bad args, an unknown name, start while the relay is not wired in',
  T,
  async () => {
    const tmp = tempLedgerPath();
    const h = harness(tmp.path);
    try {
      const list = await h.command('outbox.list');
      assert.deepEqual(list.ok && list.result, { pending: 0, dead: 0, rows: [] });
      const bad = await h.command('outbox.retry', { id: -1 });
      assert.equal(!bad.ok && bad.error.code, 'BAD_ARGS');
      const missing = await h.command('outbox.retry', { id: 99 });
      assert.equal(!missing.ok && missing.error.code, 'BAD_ARGS');
      assert.match(!missing.ok ? missing.error.message : '', /99/);
      const none = await h.command('outbox.retry');
      assert.deepEqual(none.ok && none.result, { retried: [] });
      const unknown = await h.command('format.disk');
      assert.equal(!unknown.ok && unknown.error.code, 'UNKNOWN_COMMAND');
      const start = await h.command('start', {});
      assert.equal(!start.ok && start.error.code, 'UNAVAILABLE');
    } finally {
      h.close();
      tmp.cleanup();
    }
  },
);

test(
  'reader.disable tells the machine loop and is kept in the ledger: the next start disables the reader again',
  T,
  async () => {
    const tmp = tempLedgerPath();
    let h = harness(tmp.path);
    try {
      const r = await h.command('reader.disable');
      assert.deepEqual(r.ok && r.result, { readerDisabledRemotely: true, takesEffect: 'now' });
      assert.deepEqual(h.toMain, [{ type: 'reader.service', outOfService: true }]);
      const facts = await h.next('fleet.facts', (m) => m.facts.readerDisabledRemotely);
      assert.equal(facts.facts.readerDisabledRemotely, true);
      h.close();
      h = harness(tmp.path);
      assert.deepEqual(h.toMain, [{ type: 'reader.service', outOfService: true }], 'restored at start');
      await h.command('reader.enable');
      assert.deepEqual(h.toMain.at(-1), { type: 'reader.service', outOfService: false });
    } finally {
      h.close();
      tmp.cleanup();
    }
  },
);

test('a dead-lettered outbox row raises OUTBOX_DEAD_LETTER: an alarm event and the status list', T, async () => {
  const tmp = tempLedgerPath();
  const h = harness(tmp.path);
  try {
    h.side.health({ gatewayOnline: true, outboxPending: 0, outboxDead: 1, clockSteps: 0 });
    const facts = await h.next('fleet.facts', (m) => m.facts.alarms.includes('OUTBOX_DEAD_LETTER'));
    assert.deepEqual(facts.facts.outbox, { pending: 0, dead: 1 });
    const [event] = h.ledger.fleetEvents.pending(0, 10);
    const body = JSON.parse(event!.body);
    assert.deepEqual([body.kind, body.code, body.state], ['alarm', 'OUTBOX_DEAD_LETTER', 'raised']);
  } finally {
    h.close();
    tmp.cleanup();
  }
});

test(
  'inside a session, the reader going vend and back is not sent per ' +
    'vend: the tick sends the latest; other changes go at once',
  T,
  async () => {
    const tmp = tempLedgerPath();
    const h = harness(tmp.path);
    try {
      // What is posted, seen synchronously (a message on the port arrives a turn later).
      const posted: PaymentToFleet[] = [];
      const port = (h.side as unknown as { port: MessagePort }).port;
      const post = port.postMessage.bind(port);
      port.postMessage = (m: PaymentToFleet) => (posted.push(m), post(m));
      const TX = 'tx-1';
      const facts = () =>
        posted
          .filter((m): m is Extract<PaymentToFleet, { type: 'fleet.facts' }> => m.type === 'fleet.facts')
          .map((m) => m.facts.reader);

      h.side.fromMain({ type: 'reader.status', status: 'enabled', txId: null });
      h.side.fromMain({ type: 'reader.status', status: 'session', txId: TX });
      assert.deepEqual(facts(), ['enabled', 'session'], 'the reader enabled and the session begun: sent at once');
      for (let vend = 0; vend < 3; vend++) {
        h.side.fromMain({ type: 'reader.status', status: 'vend', txId: TX });
        h.side.fromMain({ type: 'reader.status', status: 'session', txId: TX });
      }
      h.side.fromMain({ type: 'reader.status', status: 'vend', txId: TX });
      assert.deepEqual(facts(), ['enabled', 'session'], 'no fleet.facts per vend');
      // The next tick (within a second) sends the latest.
      await h.next('fleet.facts', (m) => m.facts.reader === 'vend');
      h.side.fromMain({ type: 'reader.status', status: 'session', txId: TX });
      h.side.fromMain({ type: 'reader.status', status: 'enabled', txId: null });
      assert.deepEqual(
        facts().slice(-2),
        ['vend', 'enabled'],
        'the session over: sent at once, the vend in between left to the tick',
      );
    } finally {
      h.close();
      tmp.cleanup();
    }
  },
);
