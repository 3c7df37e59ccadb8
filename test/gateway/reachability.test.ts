/**
 * GatewayReachability (src/gateway/reachability.ts): the journal's account of the gateway going
 * away and coming back, on a fed clock. One warn line when calls stop being answered, with the
 * reason; one info line when an answer comes back, with how long it lasted; bounded when it flaps
 * or stays down.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayReachability } from '../../src/gateway/reachability.js';
import type { GatewayOutcome } from '../../src/gateway/outcome.js';

const failed: GatewayOutcome<unknown> = {
  kind: 'transport',
  failure: 'refused',
  detail: 'Settlement: UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  httpStatus: null,
  elapsedMs: 3,
};
const answered: GatewayOutcome<unknown> = { kind: 'approved', response: {}, elapsedMs: 3 };
const declined: GatewayOutcome<unknown> = { kind: 'declined', code: 1, message: null, response: {}, elapsedMs: 3 };

function rig(options: { repeatIntervalMs?: number; reminderMs?: number } = {}) {
  let nowMs = 1_000;
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const log = {
    warn: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'warn', fields, msg }),
    info: (fields: Record<string, unknown>, msg: string) => lines.push({ level: 'info', fields, msg }),
  };
  const r = new GatewayReachability({ log: log as never, now: () => nowMs, ...options });
  return { r, lines, advance: (ms: number) => (nowMs += ms) };
}

test('down: one warn line with the reason; back: one info line with how long and how many calls failed', () => {
  const { r, lines, advance } = rig();
  r.observe('Settlement', answered);
  assert.equal(lines.length, 0, 'an answer while reachable says nothing');
  r.observe('Settlement', failed);
  assert.equal(r.unreachable, true);
  for (let i = 0; i < 8; i++) {
    advance(20_000);
    r.observe('Settlement', failed);
  }
  assert.equal(lines.length, 1, JSON.stringify(lines));
  assert.equal(lines[0]!.level, 'warn');
  assert.equal(lines[0]!.fields.code, 'GATEWAY_UNREACHABLE');
  assert.match(lines[0]!.msg, /gateway unreachable \(refused: Settlement: UNABLE_TO_VERIFY_LEAF_SIGNATURE\)/);
  assert.match(lines[0]!.msg, /gateway\.caFile/);
  advance(30_000);
  r.observe('Settlement', declined);
  assert.equal(r.unreachable, false, 'a decline is an answer');
  assert.equal(lines.length, 2);
  assert.equal(lines[1]!.level, 'info');
  assert.equal(lines[1]!.msg, 'gateway reachable again');
  assert.deepEqual(
    { downForS: lines[1]!.fields.downForS, failedCalls: lines[1]!.fields.failedCalls },
    { downForS: 190, failedCalls: 9 },
  );
});

test('a gateway down for long gets one reminder per interval, not a line per retry', () => {
  const { r, lines, advance } = rig({ reminderMs: 600_000 });
  r.observe('Settlement', failed);
  for (let i = 0; i < 100; i++) {
    advance(15_000);
    r.observe('Settlement', failed);
  }
  // 1500 s down: the first line and two reminders (at 600 s and 1200 s).
  assert.deepEqual(
    lines.map((l) => l.msg.slice(0, 26)),
    ['gateway unreachable (refus', 'gateway still unreachable ', 'gateway still unreachable '],
  );
  assert.equal(lines[2]!.fields.failedCalls, 81);
});

test('a flapping gateway is bounded: the changes within an interval are counted into one summary line', () => {
  const { r, lines, advance } = rig({ repeatIntervalMs: 60_000 });
  for (let i = 0; i < 50; i++) {
    r.observe('Authorization', failed);
    advance(100);
    r.observe('Authorization', answered);
    advance(100);
  }
  assert.deepEqual(
    lines.map((l) => l.level),
    ['warn', 'info'],
    'one line each while the interval runs',
  );
  advance(60_000);
  r.observe('Authorization', failed);
  const summaries = lines.filter((l) => typeof l.fields.repeated === 'number');
  assert.deepEqual(
    summaries.map((l) => [l.level, l.fields.repeated]),
    [['warn', 49]],
  );
});
