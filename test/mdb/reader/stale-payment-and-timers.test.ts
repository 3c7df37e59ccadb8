/**
 * The reader against payment messages and timers that no longer fit its state (src/mdb/reader
 * payment-input.ts): a message for another request or session, or a timer that fired after its
 * state was left, is refused and moves nothing. Money depends on it: a stale approval must not
 * approve the vend waiting now, a late deny or payment-wait must not cut a dispense, a stale
 * idle timer must not end a paid session. Timers are fed in as inputs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { line, pay, posted, reach, refusals, sent, timeout } from './helpers.js';

test('a vend.approve for another request is answered expired and does not approve the vend that waits', () => {
  const h = reach.DynamicAwaitingPayment(); // waits for rq-1
  const out = h.feed(pay({ type: 'vend.approve', requestId: 'rq-0', txId: 'D0', amount: 2 }));
  assert.deepEqual(sent(out), [], 'no C,VEND approval written for the stale payment');
  assert.deepEqual(posted(out), [
    {
      type: 'vend.result',
      txId: 'D0',
      requestId: 'rq-0',
      vendSeq: null,
      outcome: 'expired',
      detail: 'the vend request had already been answered or dropped',
    },
  ]);
  assert.ok(
    h.model.state.kind === 'Vend' && h.model.state.vend.phase === 'awaiting-payment',
    'rq-1 still waits for its own payment',
  );
});

test('a vend.deny arriving after the approval does not deny the dispense in progress', () => {
  const h = reach.DynamicAwaitingResult(); // rq-1 approved, dispensing
  const out = h.feed(pay({ type: 'vend.deny', requestId: 'rq-1', reason: 'late' }));
  assert.deepEqual(sent(out), []);
  assert.deepEqual(posted(out), []);
  assert.deepEqual(refusals(out), ['vend.deny: request rq-1 is not waiting for payment (late)']);
  assert.ok(h.model.state.kind === 'Vend' && h.model.state.vend.phase === 'awaiting-result');
});

test('a vend.deny for another request is refused and the waiting vend keeps waiting', () => {
  const h = reach.DynamicAwaitingPayment();
  const out = h.feed(pay({ type: 'vend.deny', requestId: 'rq-0', reason: 'old' }));
  assert.deepEqual(sent(out), [], 'no C,VEND,-1 for rq-1');
  assert.equal(refusals(out).length, 1);
  assert.ok(h.model.state.kind === 'Vend' && h.model.state.vend.phase === 'awaiting-payment');
});

test('a payment-wait timer that fires during the dispense neither denies it nor ends its request', () => {
  const h = reach.DynamicAwaitingResult();
  const out = h.feed(timeout('payment-wait'));
  assert.deepEqual(sent(out), []);
  assert.deepEqual(posted(out), []);
  assert.deepEqual(refusals(out), ['timeout payment-wait: stale in state Vend']);
  assert.ok(h.model.state.kind === 'Vend' && h.model.state.vend.phase === 'awaiting-result');
});

test('a vend-result timer that fires while a Dynamic QR vend waits for payment reports no vend result', () => {
  const h = reach.DynamicAwaitingPayment();
  const out = h.feed(timeout('vend-result'));
  assert.deepEqual(posted(out), [], 'no vend.result timeout for a vend never approved');
  assert.deepEqual(refusals(out), ['timeout vend-result: stale in state Vend']);
  assert.ok(h.model.state.kind === 'Vend' && h.model.state.vend.phase === 'awaiting-payment');
});

test(
  'a Dynamic QR dispense with no result in time outside a ' +
    'session: timeout reported, the reader enabled with no stop',
  () => {
    const h = reach.DynamicAwaitingResult();
    const out = h.feed(timeout('vend-result'));
    assert.deepEqual(
      posted(out).map((m) => m.type === 'vend.result' && m.outcome),
      ['timeout'],
    );
    assert.deepEqual(sent(out), [], 'no session to stop');
    assert.deepEqual(h.model.state, { kind: 'Enabled', holdVirtual: false });
  },
);

test('a stale session-refresh timer does not end a paid session', () => {
  const h = reach.SessionIdle(); // static session T1
  const out = h.feed(timeout('session-refresh'));
  assert.deepEqual(sent(out), [], 'no C,STOP');
  assert.deepEqual(refusals(out), ['timeout session-refresh: stale in state SessionIdle']);
  assert.equal(h.state, 'SessionIdle');
});

test('a session-refresh timer with no session open is refused as stale', () => {
  const h = reach.Enabled();
  const out = h.feed(timeout('session-refresh'));
  assert.deepEqual(sent(out), []);
  assert.deepEqual(refusals(out), ['timeout session-refresh: stale in state Enabled']);
  assert.equal(h.state, 'Enabled');
});

test('a session.begin while a paid session is open is refused and the open session is not stopped', () => {
  const h = reach.SessionIdle(); // T1 open
  const out = h.feed(pay({ type: 'session.begin', txId: 'T2', funds: 3 }));
  assert.deepEqual(sent(out), [], 'no C,STOP of T1');
  assert.deepEqual(posted(out), [{ type: 'session.refused', txId: 'T2', reason: 'another session is open' }]);
  assert.equal(h.state, 'SessionIdle');
});

test('a session.begin repeated for the session that is closing is refused quietly, never as session.refused', () => {
  // session.refused would tell the payment side T1 never opened, while it did and is being closed.
  const h = reach.Stopping(); // T1 closing
  const out = h.feed(pay({ type: 'session.begin', txId: 'T1', funds: 5 }));
  assert.deepEqual(posted(out), []);
  assert.deepEqual(refusals(out), ['session.begin: session T1 is already open or opening']);
});

test('a session.cancel for a session already closing is refused as stale, with no second C,STOP', () => {
  const h = reach.Stopping();
  const out = h.feed(pay({ type: 'session.cancel', txId: 'T1', reason: 'again' }));
  assert.deepEqual(sent(out), []);
  assert.deepEqual(refusals(out), ['session.cancel: no open session T1 (again)']);
  assert.equal(h.state, 'Stopping');
});

test('a session.cancel during a static dispense: the dispense ends, then the session stops as a reader cancel', () => {
  const h = reach.VendStatic(); // T1 funds 5.00, vend 1.50 approved
  const during = h.feed(pay({ type: 'session.cancel', txId: 'T1', reason: 'operator' }));
  assert.deepEqual(sent(during), [], 'the dispense is not interrupted');
  assert.equal(h.state, 'Vend');
  h.feed(line('c,VEND,SUCCESS'));
  assert.ok(h.model.state.kind === 'Stopping');
  assert.equal(h.model.state.reason, 'reader-cancel');
  const ended = posted(h.feed(line('c,STATUS,ENABLED')));
  assert.deepEqual(ended, [
    { type: 'session.ended', txId: 'T1', reason: 'reader-cancel', vendsSucceeded: 1, amountVended: 1.5 },
  ]);
});
