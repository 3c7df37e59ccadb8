/**
 * What the reader tells the payment side about itself (readerStatus: the Start endpoint's busy
 * check, the display) and whether anything is in flight (isQuiescent: a restart or an update
 * waits for it), in every situation reached through real transitions. A wrong answer lets a
 * Start open a second session over a paid one, or a restart cut a vend in half.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isQuiescent, readerStatus } from '../../../src/mdb/reader/index.js';
import { Harness, line, pay, posted, reach, readerConfig, timeout } from './helpers.js';

function seen(h: Harness): string {
  const { status, txId } = readerStatus(h.model);
  return `${h.state} ${status} ${txId ?? '-'} ${isQuiescent(h.model) ? 'quiet' : 'busy'}`;
}

test('status and quiescence of the paid situations', () => {
  assert.equal(seen(reach.Offline()), 'Offline offline - quiet');
  assert.equal(seen(reach.Inactive()), 'Inactive inactive - quiet');
  assert.equal(seen(reach.Disabled()), 'Disabled disabled - quiet');
  assert.equal(seen(reach.Enabled()), 'Enabled enabled - quiet');
  assert.equal(seen(reach.Starting()), 'Starting session T1 busy');
  assert.equal(seen(reach.SessionIdle()), 'SessionIdle session T1 busy');
  assert.equal(seen(reach.VendStatic()), 'Vend vend T1 busy');
  assert.equal(seen(reach.Stopping()), 'Stopping session T1 busy');
  // A Dynamic QR vend outside a session: no transaction until the payment approved it.
  assert.equal(seen(reach.DynamicAwaitingPayment()), 'Vend vend - busy');
  assert.equal(seen(reach.DynamicAwaitingResult()), 'Vend vend D1 busy');
});

test('a virtual-credit session holds no payment: enabled to the payment side, and quiet once open', () => {
  const cfg = readerConfig({ alwaysIdle: false, virtualCreditMinor: 1000, sessionRefreshMs: 60_000 });
  const h = reach.Enabled(cfg);
  assert.equal(seen(h), 'Starting enabled - busy', 'the virtual session is opening');
  h.feed(line('c,STATUS,IDLE,10.00'));
  assert.equal(seen(h), 'SessionIdle enabled - quiet');

  // A paid session replaces it: while the virtual one closes, the reader is taken by T2.
  const paid = h.clone();
  paid.feed(pay({ type: 'session.begin', txId: 'T2', funds: 5 }));
  assert.equal(seen(paid), 'Stopping session T2 busy');

  // The refresh closes the virtual session with nothing to open after it.
  const refresh = h.clone();
  refresh.feed(timeout('session-refresh'));
  assert.equal(seen(refresh), 'Stopping enabled - busy');
});

test('shutdown while a session is opening: the session is cancelled by the reader once it opens', () => {
  const h = reach.Starting();
  h.feed({ kind: 'shutdown' });
  assert.equal(h.state, 'Starting');
  const out = h.feed(line('c,STATUS,IDLE,5.00'));
  assert.equal(h.state, 'Stopping');
  assert.deepEqual(
    posted(out).map((m) => m.type),
    ['session.started'],
  );
  if (h.model.state.kind !== 'Stopping') assert.fail('not stopping');
  assert.equal(h.model.state.reason, 'reader-cancel');
});
