/** readerScreen (src/flows/reader-screen.ts): the screen for a reader that cannot take a payment, on a fed clock. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readerScreen } from '../../src/flows/reader-screen.js';

test('usable statuses are the idle screen, whatever the time', () => {
  for (const status of ['enabled', 'session', 'vend'] as const)
    assert.deepEqual(readerScreen(status, 10_000_000, 30_000), { show: 'idle' });
});

test('within the grace period: waiting, with the time left until the answer changes', () => {
  assert.deepEqual(readerScreen('disabled', 0, 30_000), { show: 'waiting', recheckInMs: 30_000 });
  assert.deepEqual(readerScreen('inactive', 12_500, 30_000), { show: 'waiting', recheckInMs: 17_500 });
  assert.deepEqual(readerScreen('offline', 29_999, 30_000), { show: 'waiting', recheckInMs: 1 });
});

test('past the grace period: out of order, with the code for the technician', () => {
  assert.deepEqual(readerScreen('disabled', 30_000, 30_000), {
    show: 'out-of-order',
    reason: 'unavailable',
    code: 'E-RDR-DIS',
  });
  assert.deepEqual(readerScreen('inactive', 31_000, 30_000), {
    show: 'out-of-order',
    reason: 'unavailable',
    code: 'E-RDR-DIS',
  });
  assert.deepEqual(readerScreen('offline', 30_000, 30_000), {
    show: 'out-of-order',
    reason: 'reader-offline',
    code: 'E-RDR-OFF',
  });
});

test('a grace period of 0 shows out of order at once (the behaviour before docs/decisions/smallest-boards.md)', () => {
  assert.deepEqual(readerScreen('disabled', 0, 0), { show: 'out-of-order', reason: 'unavailable', code: 'E-RDR-DIS' });
});
