/**
 * The reader at shutdown and when the payment side refuses sessions (src/mdb/reader): a vend
 * waiting for payment is denied and its request ended (nobody pays for a vend that cannot
 * happen), a dispense in progress finishes first, and a refused session.begin says why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { armed, line, pay, posted, reach, refusals, sent } from './helpers.js';

test('shutdown during a static dispense: the result is awaited, then the session stops (reader cancel)', () => {
  const h = reach.VendStatic();
  assert.deepEqual(h.feed({ kind: 'shutdown' }), []);
  assert.equal(h.state, 'Vend');
  const out = h.feed(line('c,VEND,SUCCESS'));
  assert.deepEqual(
    posted(out).map((m) => m.type),
    ['vend.result'],
  );
  assert.equal(h.state, 'Stopping');
  if (h.model.state.kind === 'Stopping') assert.equal(h.model.state.reason, 'reader-cancel');
});

test('shutdown with a Dynamic QR vend waiting for payment, no session: denied and the reader enabled', () => {
  const h = reach.DynamicAwaitingPayment();
  const out = h.feed({ kind: 'shutdown' });
  assert.equal(sent(out)[0], 'C,VEND,-1');
  assert.deepEqual(
    posted(out).map((m) => m.type),
    ['vend.request.ended'],
  );
  assert.equal(h.state, 'Enabled');
});

test('shutdown during a dispense: nothing is cut, the vend result is still awaited', () => {
  const h = reach.DynamicAwaitingResult();
  const out = h.feed({ kind: 'shutdown' });
  assert.deepEqual(sent(out), []);
  assert.deepEqual(posted(out), []);
  assert.equal(h.state, 'Vend');
});

test('sessions refused without a reason: a session.begin is refused naming the payment side', () => {
  const h = reach.Enabled();
  h.feed(pay({ type: 'sessions.allowed', allowed: false, reason: null }));
  const out = h.feed(pay({ type: 'session.begin', txId: 'T9', funds: 5 }));
  assert.deepEqual(posted(out), [
    { type: 'session.refused', txId: 'T9', reason: 'new sessions are refused: refused by the payment side' },
  ]);
  h.feed(pay({ type: 'sessions.allowed', allowed: true, reason: null }));
  const again = h.feed(pay({ type: 'session.begin', txId: 'T9', funds: 5 }));
  assert.deepEqual(posted(again), []);
  assert.equal(h.state, 'Starting');
  assert.deepEqual(armed(again), ['board-answer']);
});

test("the payment side's health and lifecycle messages do not move the reader", () => {
  for (const message of [{ type: 'health' }, { type: 'ready' }, { type: 'stopped' }] as const) {
    const h = reach.SessionIdle();
    const before = structuredClone(h.model);
    const out = h.feed(pay(message as never));
    assert.deepEqual(out, [], message.type);
    assert.deepEqual(refusals(out), []);
    assert.deepEqual(h.model, before, message.type);
  }
});

test(
  'the link lost with a Dynamic QR vend waiting for payment: the ' +
    "request ends as the machine's doing, not the consumer's",
  () => {
    const h = reach.DynamicAwaitingPayment();
    const out = h.feed({ kind: 'link.down', reason: 'unplugged' });
    const ended = posted(out).filter((m) => m.type === 'vend.request.ended');
    assert.equal(ended.length, 1);
    assert.equal(ended[0]!.type === 'vend.request.ended' && ended[0]!.byConsumer, false);
  },
);

test('a denied Dynamic QR vend cancels its payment wait', () => {
  const h = reach.DynamicAwaitingPayment();
  const out = h.feed({ kind: 'shutdown' });
  assert.ok(
    out.some((e) => e.kind === 'timer.cancel' && e.timer === 'payment-wait'),
    'the payment-wait timer is cancelled',
  );
});

test('a static vend dispensed with funds left: the session stays open for the next one', () => {
  const h = reach.VendStatic();
  h.feed(line('c,VEND,SUCCESS'));
  assert.equal(h.state, 'SessionIdle');
});
