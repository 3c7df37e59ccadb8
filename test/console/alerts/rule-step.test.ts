/** The alert rule's transition (src/console/alerts/rule-step.ts): hold time, hours, repeats, clears. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alertStep, type AlertState, type RuleTiming } from '../../../src/console/alerts/rule-step.js';

const MIN = 60_000;
const rule: RuleTiming = { holdMs: 5 * MIN, repeatMs: 60 * MIN, sayCleared: true };
const holds = { since: 0, detail: 'READER_OFFLINE' };

function run(inputs: [number, boolean, boolean][], timing = rule): string[] {
  let state: AlertState = { tag: 'quiet' };
  const said: string[] = [];
  for (const [minute, holding, inHours] of inputs) {
    const r = alertStep(state, { holds: holding ? holds : null, now: minute * MIN, inHours }, timing);
    state = r.next;
    said.push(`${minute}:${r.say ?? '-'}:${state.tag}`);
  }
  return said;
}

test('a condition is told once it held for the hold time, not before', () => {
  assert.deepEqual(
    run([
      [0, true, true],
      [4, true, true],
      [5, true, true],
      [6, true, true],
    ]),
    ['0:-:holding', '4:-:holding', '5:raised:told', '6:-:told'],
  );
});

test('a flapping machine pages nobody: each return starts the hold time again', () => {
  const flaps: [number, boolean, boolean][] = [];
  for (let m = 0; m < 40; m += 2) flaps.push([m, m % 4 === 0, true]);
  assert.ok(run(flaps).every((s) => !s.includes('raised')));
});

test('repeats every interval while it holds, and says when it cleared', () => {
  assert.deepEqual(
    run([
      [0, true, true],
      [5, true, true],
      [64, true, true],
      [65, true, true],
      [70, false, true],
    ]),
    ['0:-:holding', '5:raised:told', '64:-:told', '65:repeated:told', '70:cleared:quiet'],
  );
});

test('outside the hours nothing is said; a condition still holding is told when they open', () => {
  assert.deepEqual(
    run([
      [0, true, false],
      [30, true, false],
      [60, true, true],
    ]),
    ['0:-:holding', '30:-:holding', '60:raised:told'],
  );
});

test('a clear outside the hours is said when they open, unless it came back meanwhile', () => {
  assert.deepEqual(
    run([
      [0, true, true],
      [5, true, true],
      [10, false, false],
      [20, false, true],
    ]),
    ['0:-:holding', '5:raised:told', '10:-:clearing', '20:cleared:quiet'],
  );
  assert.deepEqual(
    run([
      [0, true, true],
      [5, true, true],
      [10, false, false],
      [15, true, false],
      [20, true, true],
    ]),
    ['0:-:holding', '5:raised:told', '10:-:clearing', '15:-:told', '20:-:told'],
  );
});

test('without repeats or clears the owner is told once', () => {
  const once = { holdMs: 0, repeatMs: 0, sayCleared: false };
  assert.deepEqual(
    run(
      [
        [0, true, true],
        [600, true, true],
        [601, false, true],
      ],
      once,
    ),
    ['0:raised:told', '600:-:told', '601:-:quiet'],
  );
});
