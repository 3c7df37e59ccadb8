import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClockStepDetector } from '../../src/core/clock.js';
import { RepeatedLog } from '../../src/core/log-limiter.js';
import { escapeForTerminal, jsonForTerminal } from '../../src/core/terminal-text.js';

const T = { timeout: 5_000 };

test('clock step detector: a wall jump beyond the threshold is a step, drift below it is not', T, () => {
  let wall = 1_000_000;
  let mono = 0;
  const detector = new ClockStepDetector(
    2_000,
    () => wall,
    () => mono,
  );
  wall += 1_000;
  mono += 1_000;
  assert.equal(detector.check(), null);
  wall += 1_500; // 500 ms of drift
  mono += 1_000;
  assert.equal(detector.check(), null);
  wall += 80 * 3_600_000;
  assert.equal(detector.check()?.stepMs, 80 * 3_600_000);
  wall -= 10 * 3_600_000;
  mono += 5;
  assert.equal(detector.check()?.stepMs, -10 * 3_600_000 - 5);
  assert.equal(detector.steps, 2);
});

test('repeated log: the first line at once, then one summary with the count per interval', T, () => {
  let now = 0;
  const lines: Array<[Record<string, unknown>, number]> = [];
  const log = new RepeatedLog({ intervalMs: 10_000, now: () => now, write: (f, n) => lines.push([f, n]) });
  for (let i = 0; i < 500; i += 1) {
    log.add({ i });
    now += 10;
  }
  assert.deepEqual(lines, [[{ i: 0 }, 0]]);
  log.flush();
  assert.deepEqual(lines[1], [{ i: 499 }, 499]);
  now = 20_000;
  log.add({ i: 500 });
  assert.deepEqual(lines[2], [{ i: 500 }, 0]);
  log.flush();
  assert.equal(lines.length, 3, 'nothing to summarize');
});

test('terminal text: controls, escape sequences and bidi characters become visible escapes', T, () => {
  assert.equal(escapeForTerminal('plain text 123'), 'plain text 123');
  assert.equal(escapeForTerminal('a\r\nb'), 'a\\x0d\\x0ab');
  assert.equal(escapeForTerminal('\u001b[2J'), '\\x1b[2J');
  assert.equal(escapeForTerminal('x\u202ey\u2066'), 'x\\u202ey\\u2066');
  assert.equal(escapeForTerminal('caf\u00e9'), 'caf\u00e9', 'printable non-ASCII is shown as is');
});

test('terminal JSON: C1, bidi and separator characters become \\u escapes; still JSON, same values', T, () => {
  const value = { a: 'x\u009b31m\u202ey\u2028z\u007f', b: ['\u001b[2J', 'caf\u00e9'] };
  const text = jsonForTerminal(value);
  assert.equal(text, '{"a":"x\\u009b31m\\u202ey\\u2028z\\u007f","b":["\\u001b[2J","caf\u00e9"]}');
  assert.deepEqual(JSON.parse(text), value);
  const indented = jsonForTerminal(value, 2);
  assert.equal(indented.split('\n').length, 7, 'the line breaks of indented output stay line breaks');
  assert.deepEqual(JSON.parse(indented), value);
});
