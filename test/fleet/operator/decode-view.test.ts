import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeFleetMessage, FleetView, SEEN_EVENT_IDS } from '../../../src/fleet/operator/index.js';
import { MAX_PAYLOAD_BYTES } from '../../../src/fleet/contract/index.js';
import { onlineStatus, sale } from './fixtures.js';

const enc = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

test(
  "a valid status, event, health and reply decode to their kinds; the machine is the topic's",
  { timeout: 5_000 },
  () => {
    assert.deepEqual(decodeFleetMessage('qrvend', 'qrvend/M1/status', enc(onlineStatus('M1'))), {
      kind: 'status',
      machineId: 'M1',
      status: onlineStatus('M1'),
    });
    assert.deepEqual(decodeFleetMessage('qrvend', 'qrvend/M1/status', enc({ online: false })), {
      kind: 'status',
      machineId: 'M1',
      status: { online: false },
    });
    const event = decodeFleetMessage('qrvend', 'qrvend/M1/events', enc(sale('M1', 'e1')));
    assert.equal(event.kind, 'event');
    const health = decodeFleetMessage(
      'qrvend',
      'qrvend/M1/health',
      enc({ machineId: 'M1', at: '2026-01-01T00:00:00Z', stats: { vends: 3 } }),
    );
    assert.equal(health.kind, 'health');
    const reply = decodeFleetMessage(
      'acme/vend',
      'acme/vend/M1/replies',
      enc({ ok: true, machineId: 'M1', command: 'ping', correlationId: 'c', result: null }),
    );
    assert.equal(reply.kind, 'reply');
    assert.deepEqual(decodeFleetMessage('qrvend', 'qrvend/M1/cmd/ping', enc({})), { kind: 'ignored', machineId: 'M1' });
    assert.deepEqual(decodeFleetMessage('qrvend', 'qrvend/M1/status', Buffer.alloc(0)), {
      kind: 'removed',
      machineId: 'M1',
    });
  },
);

test('hostile messages are bad with a reason, never a throw', { timeout: 5_000 }, () => {
  const reason = (topic: string, payload: Buffer) => {
    const d = decodeFleetMessage('qrvend', topic, payload);
    return d.kind === 'bad' ? d.reason : d.kind;
  };
  assert.equal(reason('other/M1/status', enc(onlineStatus('M1'))), 'topic');
  assert.equal(reason('qrvend/M1/status/extra', enc(onlineStatus('M1'))), 'topic');
  assert.equal(reason('qrvend/M1/status', Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 0x20)), 'too-large');
  assert.equal(reason('qrvend/M1/status', enc('{"online": tru')), 'not-json');
  assert.equal(reason('qrvend/M1/status', enc({ online: true })), 'schema');
  assert.equal(reason('qrvend/M1/events', enc({ ...sale('M1', 'e1'), amount: 1.5 })), 'schema');
  assert.equal(reason('qrvend/M1/events', enc({ ...sale('M1', 'e1'), kind: 'refund' })), 'schema');
  assert.equal(reason('qrvend/M1/status', enc(onlineStatus('M2'))), 'machine-mismatch');
  assert.equal(reason('qrvend/M1/events', enc(sale('M2', 'e1'))), 'machine-mismatch');
  assert.equal(reason('qrvend/M1/events', enc('null')), 'schema');
});

test(
  'the view keeps one row per machine, the last sale, and counts malformed messages by reason',
  { timeout: 5_000 },
  () => {
    const view = new FleetView();
    view.apply(decodeFleetMessage('qrvend', 'qrvend/M2/status', enc(onlineStatus('M2'))));
    view.apply(decodeFleetMessage('qrvend', 'qrvend/M1/status', enc({ online: false })));
    view.apply(decodeFleetMessage('qrvend', 'qrvend/M2/events', enc({ ...sale('M2', 'e1'), amount: '2.00' })));
    view.apply(decodeFleetMessage('qrvend', 'qrvend/M3/status', enc('garbage')));
    view.apply(decodeFleetMessage('qrvend', 'qrvend/M3/status', enc({ online: 'yes' })));
    assert.deepEqual(
      view.rows().map((r) => r.machineId),
      ['M1', 'M2'],
    );
    assert.equal(view.machines.get('M2')?.lastSale?.amount, '2.00');
    assert.deepEqual(view.bad.byReason, { 'not-json': 1, schema: 1 });
    assert.equal(view.bad.total, 2);
    view.apply(decodeFleetMessage('qrvend', 'qrvend/M1/status', Buffer.alloc(0)));
    assert.deepEqual(
      view.rows().map((r) => r.machineId),
      ['M2'],
    );
  },
);

test(
  'a repeated eventId is a duplicate (per machine), and the memory of eventIds is bounded',
  { timeout: 5_000 },
  () => {
    const view = new FleetView();
    const first = view.apply(decodeFleetMessage('qrvend', 'qrvend/M1/events', enc(sale('M1', 'e1'))));
    const again = view.apply(decodeFleetMessage('qrvend', 'qrvend/M1/events', enc(sale('M1', 'e1'))));
    const other = view.apply(decodeFleetMessage('qrvend', 'qrvend/M2/events', enc(sale('M2', 'e1'))));
    assert.deepEqual(
      [first, again, other].map((a) => a.kind === 'event' && a.duplicate),
      [false, true, false],
    );
    assert.equal(view.duplicates, 1);
    for (let i = 0; i < SEEN_EVENT_IDS + 10; i += 1)
      view.apply(decodeFleetMessage('qrvend', 'qrvend/M3/events', enc(sale('M3', `x${i}`))));
    // e1 of M1 was forgotten (oldest), so it counts as new again; a recent one is still known.
    const old = view.apply(decodeFleetMessage('qrvend', 'qrvend/M1/events', enc(sale('M1', 'e1'))));
    const recent = view.apply(
      decodeFleetMessage('qrvend', 'qrvend/M3/events', enc(sale('M3', `x${SEEN_EVENT_IDS + 5}`))),
    );
    assert.equal(old.kind === 'event' && old.duplicate, false);
    assert.equal(recent.kind === 'event' && recent.duplicate, true);
  },
);
