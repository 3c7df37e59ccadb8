/**
 * What the VMC did against its profile (docs/decisions/real-vending-machines.md items 4 and 5): facts for doctor, the
 * reset-loop hold.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NEVER_POLLS_AFTER_MS, RESET_BACKOFF_MIN_MS, RESET_LOOP_WINDOW_MS, VmcWatch } from '../../src/mdb/vmc-watch.js';
import { readerConfig } from './reader/helpers.js';
import type { BoardLine } from '../../src/mdb/codec/index.js';
import type { ReaderState } from '../../src/mdb/reader/index.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const enabled: ReaderState = { kind: 'Enabled', holdVirtual: false };
const inactive: ReaderState = { kind: 'Inactive' };

function watch(cfg = readerConfig()) {
  let now = 1_000;
  const w = new VmcWatch({
    profile: 'level3-always-idle',
    level: 3,
    profileOverrides: [],
    device: 'cashless2',
    address: '0x60',
    cfg,
    now: () => now,
  });
  return { w, advance: (ms: number) => (now += ms) };
}

const resetLine: BoardLine = { kind: 'status', status: 'INACTIVE' };

test('a VMC that never polls after configuration is reported, once the time has passed', T, () => {
  const { w, advance } = watch();
  w.observe(inactive, null, inactive, [{ kind: 'config.done' }]);
  assert.deepEqual(w.facts().contradictions, []);
  advance(NEVER_POLLS_AFTER_MS);
  assert.match(w.facts().contradictions.join(), /never polled cashless #2 \(0x60\)/);
  w.poll();
  assert.deepEqual(w.facts().contradictions, []);
});

test('never polled: reconfigurations (the link watchdog restarting a silent link) do not restart the clock', T, () => {
  const { w, advance } = watch();
  for (let i = 0; i < 6; i++) {
    w.observe(inactive, null, inactive, [{ kind: 'config.done' }]);
    advance(NEVER_POLLS_AFTER_MS / 5);
  }
  assert.match(w.facts().contradictions.join(), /never polled/);
});

test('vends outside a session are counted only when the profile has no always-idle', T, () => {
  const vend: BoardLine = { kind: 'vend-request', price: 1, item: 2 };
  const on = watch();
  on.w.observe(enabled, vend, enabled, []);
  assert.equal(on.w.facts().vendsOutsideSession, 0);
  const off = watch(readerConfig({ alwaysIdle: false }));
  off.w.observe(enabled, vend, enabled, []);
  assert.equal(off.w.facts().vendsOutsideSession, 1);
  assert.match(off.w.facts().contradictions.join(), /outside a session/);
});

test('resets after setup: three in the window hold the reader, the next loop holds it twice as long', T, () => {
  const { w, advance } = watch();
  const reset = () => w.observe(enabled, resetLine, inactive, []);
  reset();
  reset();
  assert.equal(w.resetLoopHold(), null, 'two resets are no loop');
  reset();
  assert.equal(w.resetLoopHold(), RESET_BACKOFF_MIN_MS);
  assert.match(w.resetLoopAdvice(), /Try a session profile/);
  assert.equal(w.resetLoopHold(), null, 'held: no second hold meanwhile');
  advance(RESET_BACKOFF_MIN_MS + 1);
  reset();
  reset();
  reset();
  assert.equal(w.resetLoopHold(), RESET_BACKOFF_MIN_MS * 2);
  assert.notEqual(w.facts().resetLoop, null);
  // A quiet window after the hold: the loop is over, the next one starts short again.
  advance(RESET_BACKOFF_MIN_MS * 2 + RESET_LOOP_WINDOW_MS + 1);
  assert.equal(w.resetLoopHold(), null);
  assert.equal(w.facts().resetLoop, null);
});

test('a reset from Offline or Inactive (link up, our own configuration) is no VMC reset', T, () => {
  const { w } = watch();
  w.observe({ kind: 'Offline' }, resetLine, inactive, []);
  w.observe(inactive, resetLine, inactive, []);
  assert.equal(w.facts().resets, 0);
});

test('a refused key is a fact until the next complete configuration', T, () => {
  const { w } = watch();
  w.observe(inactive, null, inactive, [
    { kind: 'config.refused', key: 'mdb-address', value: '0x60', answer: 'c,ERR,X' },
  ]);
  assert.equal(w.facts().configRefused?.key, 'mdb-address');
  assert.notEqual(w.takeChanged(), null);
  assert.equal(w.takeChanged(), null, 'unchanged facts are not rewritten');
  w.observe(inactive, null, inactive, [{ kind: 'config.done' }]);
  assert.equal(w.facts().configRefused, null);
});
