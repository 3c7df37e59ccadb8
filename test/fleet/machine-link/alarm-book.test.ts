/** The alarm debounce: raised after the condition held, cleared after it was gone, nothing for a flap. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  emptyAlarmBook,
  observe,
  raisedCodes,
  settle,
  withRaised,
  type AlarmTiming,
} from '../../../src/fleet/machine-link/alarm-book.js';
import { ALARM_CODES, type AlarmCode } from '../../../src/fleet/contract/alarms.js';

const T = { timeout: 5_000 };
const timing = Object.fromEntries(
  ALARM_CODES.map((c) => [c, { raiseAfterMs: 10_000, clearAfterMs: 30_000 }]),
) as Record<AlarmCode, AlarmTiming>;

test(
  'raised once the condition held for raiseAfterMs, with its detail; cleared after clearAfterMs without it',
  T,
  () => {
    let book = observe(emptyAlarmBook(0), 'READER_OFFLINE', true, 1_000, 'port gone');
    let r = settle(book, 10_999, timing);
    assert.deepEqual(r.changes, []);
    r = settle(r.book, 11_000, timing);
    assert.deepEqual(r.changes, [{ code: 'READER_OFFLINE', state: 'raised', detail: 'port gone' }]);
    assert.deepEqual(raisedCodes(r.book), ['READER_OFFLINE']);
    book = observe(r.book, 'READER_OFFLINE', false, 20_000);
    assert.deepEqual(settle(book, 49_999, timing).changes, []);
    const cleared = settle(book, 50_000, timing);
    assert.deepEqual(cleared.changes, [{ code: 'READER_OFFLINE', state: 'cleared', detail: null }]);
    assert.deepEqual(raisedCodes(cleared.book), []);
  },
);

test('a condition flapping faster than the debounce produces no event at all', T, () => {
  let book = emptyAlarmBook(0);
  const changes = [];
  for (let t = 0; t < 600_000; t += 4_000) {
    book = observe(book, 'GATEWAY_UNREACHABLE', (t / 4_000) % 2 === 0, t);
    const r = settle(book, t + 1, timing);
    book = r.book;
    changes.push(...r.changes);
  }
  assert.deepEqual(changes, []);
});

test('repeated observations of the same state do not restart the clock', T, () => {
  let book = observe(emptyAlarmBook(0), 'DISK_UNWRITABLE', true, 0);
  for (let t = 1_000; t < 10_000; t += 1_000) book = observe(book, 'DISK_UNWRITABLE', true, t);
  assert.equal(settle(book, 10_000, timing).changes.length, 1);
});

test('alarms raised before a restart stay raised (no second raise) and clear when the condition is gone', T, () => {
  let book = withRaised(emptyAlarmBook(0), ['OUTBOX_DEAD_LETTER'], 0);
  book = observe(book, 'OUTBOX_DEAD_LETTER', true, 1);
  assert.deepEqual(settle(book, 100_000, timing).changes, []);
  book = observe(book, 'OUTBOX_DEAD_LETTER', false, 100_000);
  assert.deepEqual(settle(book, 130_000, timing).changes, [
    { code: 'OUTBOX_DEAD_LETTER', state: 'cleared', detail: null },
  ]);
});
