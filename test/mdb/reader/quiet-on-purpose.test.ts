/**
 * A reader disabled on purpose (held off the bus for a VMC reset loop, or out of service from the
 * fleet) gets no POLL from its board, so its line is quiet (src/mdb/reader/transition.ts). The
 * link watchdog's expiry then asks the board V instead of restarting the link; only a board that
 * does not answer is restarted, and no configuration, first or after a restart, ends in C,1.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ReaderEffect } from '../../../src/mdb/reader/index.js';
import { Harness, armed, line, linkUp, pay, reach, sent, timeout } from './helpers.js';

const silent = { kind: 'link.silent' } as const;
const hold = (reason: string | null) => ({ kind: 'hold', reason }) as const;
const restarts = (out: ReaderEffect[]) => out.filter((e) => e.kind === 'link.restart');
const silentBoard = (out: ReaderEffect[]) => out.filter((e) => e.kind === 'board.silent');

/** Power-up to a reader the VMC enabled, then held: C,0 written, the board relays no POLL. */
function held(): Harness {
  const h = reach.Enabled();
  assert.deepEqual(sent(h.feed(hold('VMC reset loop'))), ['C,0']);
  return h;
}

test('held: the quiet line is probed with V, not restarted, and not called a silent board', () => {
  const h = held();
  const out = h.feed(silent);
  assert.deepEqual(sent(out), ['V']);
  assert.deepEqual(armed(out), ['config-answer']);
  assert.deepEqual([restarts(out), silentBoard(out)], [[], []]);
  assert.equal(h.state, 'Disabled');
  // The board answers: the probe is over, and the next quiet period is probed again.
  h.feed(line('v,1.0,B1'));
  assert.equal(h.model.versionAsked, false);
  assert.deepEqual(sent(h.feed(silent)), ['V']);
});

test('held: a board that does not answer V is restarted, reported silent, configured again, still disabled', () => {
  const h = held();
  h.feed(silent);
  const out = h.feed(timeout('config-answer'));
  assert.match(restarts(out)[0]?.kind === 'link.restart' ? restarts(out)[0]!.reason : '', /did not answer V/);
  assert.equal(silentBoard(out).length, 1);
  assert.equal(h.state, 'Offline');
  const again = h.feed(linkUp, line('c,0'), ...h.cfg.setconf.map(() => line('c,SET,OK')));
  assert.ok(!sent(again).includes('C,1'), `held, the configuration ends without C,1: ${sent(again)}`);
  assert.equal(h.state, 'Disabled');
  assert.deepEqual(sent(h.feed(line('v,1.0,B1'), hold(null))), ['C,1'], 'the release enables it');
});

test('held: a second expiry while V is unanswered restarts the link', () => {
  const h = held();
  h.feed(silent);
  const out = h.feed(silent);
  assert.equal(restarts(out).length, 1);
  assert.equal(silentBoard(out).length, 1);
});

test('held: a board restart (its boot banner) is configured again without C,1', () => {
  const h = held();
  const out = h.feed(line('v,1.0,B1'), line('c,0'), ...h.cfg.setconf.map(() => line('c,SET,OK')));
  assert.equal(sent(out)[0], 'C,0', 'the board restarted: configured again');
  assert.ok(!sent(out).includes('C,1'), String(sent(out)));
  assert.equal(h.model.hostDisabled, true);
});

test('out of service: the quiet line is probed too; a board that does not answer is restarted', () => {
  const h = reach.Enabled();
  assert.deepEqual(sent(h.feed(pay({ type: 'reader.service', outOfService: true }))), ['C,0']);
  const out = h.feed(silent);
  assert.deepEqual([sent(out), restarts(out).length], [['V'], 0]);
  h.feed(line('v,1.0,B1'));
  assert.deepEqual(sent(h.feed(silent)), ['V'], 'answered: probed again at the next expiry');
  const dead = h.feed(timeout('config-answer'));
  assert.deepEqual([restarts(dead).length, silentBoard(dead).length], [1, 1]);
});

test('enabled, the same silence is a silent board: restarted and reported', () => {
  const h = reach.Enabled();
  const out = h.feed(silent);
  assert.deepEqual(sent(out), []);
  assert.equal(restarts(out).length, 1);
  const reason = 'no line from the board within mdb.linkWatchdogMs';
  assert.deepEqual(silentBoard(out), [{ kind: 'board.silent', reason }]);
});
