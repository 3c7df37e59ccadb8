/**
 * What the status LED makes of the reader (src/mdb/reader-view.ts, docs/devices.md "What the LED
 * says"): the board's polls, not the port being open; the reader's state once they come.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readerLedOf, type ReaderView } from '../../src/mdb/reader-view.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
/** A reader enabled by the VMC, its board polling. */
const polled: ReaderView = {
  linkUp: true, // the port is open
  polling: true, // a POLL since it opened, the watchdog not expired since
  answering: true, // a line since it opened
  status: 'enabled', // the VMC enabled the reader
  held: false,
  outOfService: false,
};

test('no board: port closed, port open with no poll since, watchdog expired', T, () => {
  assert.equal(readerLedOf({ ...polled, linkUp: false, polling: false, answering: false, status: 'offline' }), 'down');
  assert.equal(readerLedOf({ ...polled, polling: false, answering: false, status: 'inactive' }), 'down');
  // The board answered the configuration, but no POLL came: the VMC side is silent.
  assert.equal(readerLedOf({ ...polled, polling: false, status: 'inactive' }), 'down');
});

test('polls coming: the LED follows the reader', T, () => {
  assert.equal(readerLedOf(polled), 'up');
  assert.equal(readerLedOf({ ...polled, status: 'session' }), 'up');
  assert.equal(readerLedOf({ ...polled, status: 'vend' }), 'up');
  assert.equal(readerLedOf({ ...polled, status: 'inactive' }), 'waiting');
  assert.equal(readerLedOf({ ...polled, status: 'disabled' }), 'waiting');
});

test('disabled on purpose: held is a fault, out of service waits while the board answers V', T, () => {
  assert.equal(readerLedOf({ ...polled, held: true, status: 'disabled' }), 'down');
  assert.equal(readerLedOf({ ...polled, polling: false, outOfService: true, status: 'disabled' }), 'waiting');
  const unanswered = { ...polled, polling: false, answering: false, outOfService: true, status: 'disabled' as const };
  assert.equal(readerLedOf(unanswered), 'down');
});
