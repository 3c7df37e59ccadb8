import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FleetView,
  decodeFleetMessage,
  formatEventLine,
  formatPresenceLine,
  formatReply,
  formatStatusTable,
  shortTime,
  statusJson,
} from '../../../src/fleet/operator/index.js';
import { alarm, onlineStatus, sale } from './fixtures.js';

const enc = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

function viewOf(messages: [string, unknown][]): FleetView {
  const view = new FleetView();
  for (const [topic, payload] of messages) view.apply(decodeFleetMessage('qrvend', topic, enc(payload)));
  return view;
}

test(
  'the status table is aligned, one line per machine, with a summary and the malformed count',
  { timeout: 5_000 },
  () => {
    const view = viewOf([
      [
        'qrvend/vm-0002/status',
        onlineStatus('vm-0002', {
          alarms: ['GATEWAY_UNREACHABLE', 'OUTBOX_DEAD_LETTER'],
          gateway: 'offline',
          outbox: { pending: 3, dead: 1 },
          update: { state: 'rolled-back', version: '0.2.0', rolloutId: 'r1', at: '2026-11-23T04:00:00Z' },
        }),
      ],
      ['qrvend/vm-0001/status', onlineStatus('vm-0001')],
      ['qrvend/vm-0003/status', { online: false }],
      ['qrvend/vm-0001/events', sale('vm-0001', 'e1')],
      ['qrvend/vm-0004/status', 'not json'],
    ]);
    const text = formatStatusTable(view.rows(), view.bad);
    assert.equal(
      text,
      [
        'MACHINE  ONLINE  VERSION  READER   GATEWAY  LAST SALE       ' +
          '               OUTBOX p/d  UPDATE             ALARMS',
        'vm-0001  yes     0.1.0    enabled  online   2026-11-23 04:01:02Z 1.50 ILS  0/0         -                  -',
        'vm-0002  yes     0.1.0    enabled  offline  -                              ' +
          '3/1         ROLLED-BACK 0.2.0  GATEWAY_UNREACHABLE,OUTBOX_DEAD_LETTER',
        'vm-0003  NO      -        -        -        -                      ' +
          '        -           -                  (offline: last will)',
        '',
        '3 machines: 2 online, 1 offline, 1 with alarms, 1 dead-lettered payment',
        'versions: 0.1.0 x2',
        '1 malformed message skipped (not-json 1)',
        '',
      ].join('\n'),
    );
    const json = statusJson(view.rows(), view.bad) as {
      machines: unknown[];
      summary: { online: number };
      malformed: { total: number };
    };
    assert.equal(json.machines.length, 3);
    assert.equal(json.summary.online, 2);
    assert.equal(json.malformed.total, 1);
  },
);

test(
  'an empty fleet says so; a remote disable still waiting for the session end shows as pending',
  { timeout: 5_000 },
  () => {
    assert.equal(formatStatusTable([], new FleetView().bad), 'no machine has a retained status under this prefix\n');
    const view = viewOf([
      ['qrvend/M1/status', onlineStatus('M1', { reader: 'session', readerDisabledRemotely: true })],
    ]);
    assert.match(formatStatusTable(view.rows(), view.bad), /^M1 +yes +0\.1\.0 +session \(disable pending\) /m);
  },
);

test(
  'event lines: a sale and an alarm, device text escaped so it cannot drive the terminal',
  { timeout: 5_000 },
  () => {
    assert.equal(
      formatEventLine('M1', sale('M1', 'e1')),
      '2026-11-23 04:01:02Z  M1            sale   1.50 ILS  static settlement accepted  tx tx-1  items 12:vended',
    );
    assert.equal(
      formatEventLine('M1', alarm('M1', 'e2', 'raised', 'timeouts\x1b[2J')),
      '2026-11-23 04:05:00Z  M1            alarm  RAISED  GATEWAY_UNREACHABLE  timeouts\\x1b[2J',
    );
    assert.equal(
      formatEventLine('M1', alarm('M1', 'e3', 'cleared')),
      '2026-11-23 04:05:00Z  M1            alarm  cleared GATEWAY_UNREACHABLE',
    );
    assert.equal(
      formatEventLine('M1', { ...sale('M1', 'e4'), txId: 'a\nforged line', verdict: 'dead-letter' }).includes(
        'DEAD-LETTER  tx a\\x0aforged line',
      ),
      true,
    );
    assert.equal(shortTime('not a time\r'), 'not a time\\x0d');
    assert.match(formatPresenceLine('M1', { online: false }), /M1 {12}OFFLINE \(last will\)$/);
    assert.match(formatPresenceLine('M1', onlineStatus('M1')), /M1 {12}online  version 0\.1\.0, reader enabled$/);
  },
);

test(
  'update event lines: the state (failures in capitals), versions, progress, rollout and detail, escaped',
  { timeout: 5_000 },
  () => {
    const base = {
      kind: 'update' as const,
      eventId: 'u1',
      at: '2026-11-23T04:05:00Z',
      machineId: 'M1',
      version: '1.5.0',
      running: '1.4.0',
      rolloutId: 'r1',
      progress: null,
      detail: null,
    };
    assert.equal(
      formatEventLine('M1', { ...base, state: 'downloading', progress: { bytes: 10, size: 40 } }),
      '2026-11-23 04:05:00Z  M1            update downloading 1.5.0 (running 1.4.0)  10/40 bytes  rollout r1',
    );
    assert.equal(
      formatEventLine('M1', { ...base, state: 'rolled-back', rolloutId: null, detail: 'not healthy\x1b[2J' }),
      '2026-11-23 04:05:00Z  M1            update ROLLED-BACK 1.5.0 (running 1.4.0)  not healthy\\x1b[2J',
    );
  },
);

test('a reply: ok with its result, or the error code and message', { timeout: 5_000 }, () => {
  assert.equal(
    formatReply(
      { ok: true, machineId: 'M1', command: 'config.get', correlationId: 'c', result: { v: 'a\u202eb\nc\\x0a' } },
      1,
    ),
    'M1 config.get: ok (1 ms)\n{\n  "v": "a\\u202eb\\nc\\\\x0a"\n}\n',
  );
  assert.equal(
    formatReply({ ok: true, machineId: 'M1', command: 'ping', correlationId: 'c', result: { pong: true } }, 12.4),
    'M1 ping: ok (12 ms)\n{\n  "pong": true\n}\n',
  );
  assert.equal(
    formatReply(
      {
        ok: false,
        machineId: 'M1',
        command: 'config.set',
        correlationId: null,
        error: { code: 'CONFIG_INVALID', message: 'mdb.baudRate: expected 9600' },
      },
      30,
    ),
    'M1 config.set: error CONFIG_INVALID: mdb.baudRate: expected 9600 (30 ms)\n',
  );
});

test(
  'an identifier two online machines claim is raised under the table and in the JSON (docs/decisions/fleet-trust.md ' +
    'item 6)',
  { timeout: 5_000 },
  () => {
    const view = viewOf([
      ['qrvend/VICTIM/status', onlineStatus('VICTIM', { terminalId: 'TERM-V', uniQr: 'QR-V' })],
      ['qrvend/IMPOSTOR/status', onlineStatus('IMPOSTOR', { terminalId: 'TERM-V', uniQr: 'QR-V\u202e' })],
    ]);
    const text = formatStatusTable(view.rows(), view.bad);
    assert.match(
      text,
      new RegExp(
        /^warning: TerminalId "TERM-V" is claimed by IMPOSTOR, VICTIM /.source +
          /\(the relay routes by its signed registry; check these machines\)$/.source,
        'm',
      ),
    );
    assert.ok(!text.includes('\u202e'));
    const json = statusJson(view.rows(), view.bad) as {
      sharedIdentifiers: Array<{ kind: string; value: string; machineIds: string[] }>;
    };
    assert.deepEqual(json.sharedIdentifiers, [
      { kind: 'TerminalId', value: 'TERM-V', machineIds: ['IMPOSTOR', 'VICTIM'] },
    ]);
  },
);
