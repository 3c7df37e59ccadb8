/** Always-idle (dynamic QR) and virtual-credit vends: the payment side decides, the reader waits. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Harness,
  armed,
  line,
  pay,
  posted,
  postedTypes,
  reach,
  readerConfig,
  refusals,
  sent,
  timeout,
} from './helpers.js';
import { readerStatus } from '../../../src/mdb/reader/index.js';

test('a vend request with no session posts vend.requested and waits for the payment', () => {
  const h = reach.Enabled();
  const out = h.feed(line('c,STATUS,VEND,2.00,7'));
  assert.deepEqual(posted(out), [{ type: 'vend.requested', requestId: 'rq-1', price: 2, item: 7 }]);
  assert.deepEqual(sent(out), []);
  assert.deepEqual(armed(out), ['payment-wait']);
  assert.deepEqual(readerStatus(h.model), { status: 'vend', txId: null });
});

test('vend.approve -> C,VEND,<amount>; success -> vend.result naming the request and payment', () => {
  const h = reach.DynamicAwaitingPayment();
  const approve = h.feed(pay({ type: 'vend.approve', requestId: 'rq-1', txId: 'D1', amount: 2 }));
  assert.deepEqual(sent(approve), ['C,VEND,2.00']);
  // The vend the machine loop journals just before the write (docs/operations.md, "The vend journal").
  const write = approve.find((e) => e.kind === 'send');
  assert.deepEqual(write?.kind === 'send' ? write.approval : null, { flow: 'dynamic', txId: 'D1', requestId: 'rq-1' });
  assert.deepEqual(armed(approve), ['vend-result']);
  const done = h.feed(line('c,VEND,SUCCESS'));
  assert.deepEqual(posted(done), [
    { type: 'vend.result', txId: 'D1', requestId: 'rq-1', vendSeq: null, outcome: 'success', detail: null },
  ]);
  assert.equal(h.state, 'Enabled');
});

test('a dynamic vend failure reports failed (the payment side voids)', () => {
  const h = reach.DynamicAwaitingResult();
  const out = h.feed(line('c,ERR,VEND 3'));
  assert.equal((posted(out)[0] as { outcome: string }).outcome, 'failed');
});

test('vend.deny -> C,VEND,-1 and back to Enabled; requestIds keep counting', () => {
  const h = reach.DynamicAwaitingPayment();
  const out = h.feed(pay({ type: 'vend.deny', requestId: 'rq-1', reason: 'declined' }));
  assert.deepEqual(sent(out), ['C,VEND,-1']);
  assert.equal(h.state, 'Enabled');
  const next = h.feed(line('c,STATUS,VEND,1.00,3'));
  assert.equal((posted(next)[0] as { requestId: string }).requestId, 'rq-2');
});

test('a late vend.approve (after a deny) is answered with vend.result expired', () => {
  const h = reach.DynamicAwaitingPayment();
  h.feed(pay({ type: 'vend.deny', requestId: 'rq-1', reason: 'declined' }));
  const late = h.feed(pay({ type: 'vend.approve', requestId: 'rq-1', txId: 'D1', amount: 2 }));
  assert.deepEqual(sent(late), [], 'nothing goes to the VMC');
  assert.deepEqual(posted(late), [
    {
      type: 'vend.result',
      txId: 'D1',
      requestId: 'rq-1',
      vendSeq: null,
      outcome: 'expired',
      detail: 'the vend request had already been answered or dropped',
    },
  ]);
});

test('payment wait timeout: C,VEND,-1, vend.request.ended; a later approval expires', () => {
  const h = reach.DynamicAwaitingPayment();
  const out = h.feed(timeout('payment-wait'));
  assert.deepEqual(sent(out), ['C,VEND,-1']);
  assert.deepEqual(postedTypes(out), ['vend.request.ended']);
  assert.equal((posted(out)[0] as { byConsumer: boolean }).byConsumer, false, 'the VMC deadline is a machine cause');
  const late = h.feed(pay({ type: 'vend.approve', requestId: 'rq-1', txId: 'D1', amount: 2 }));
  assert.equal((posted(late)[0] as { outcome: string }).outcome, 'expired');
});

test('the consumer cancelling before the payment: vend.request.ended, later approval expires', () => {
  const h = reach.DynamicAwaitingPayment();
  const out = h.feed(line('c,ERR,VEND 1'));
  assert.deepEqual(posted(out), [
    { type: 'vend.request.ended', requestId: 'rq-1', reason: 'cancelled by the consumer', byConsumer: true },
  ]);
  assert.equal(h.state, 'Enabled');
  const late = h.feed(pay({ type: 'vend.approve', requestId: 'rq-1', txId: 'D1', amount: 2 }));
  assert.equal((posted(late)[0] as { outcome: string }).outcome, 'expired');
});

test('a duplicate vend.approve for the request already approved is refused, not expired', () => {
  const h = reach.DynamicAwaitingResult();
  const dup = h.feed(pay({ type: 'vend.approve', requestId: 'rq-1', txId: 'D1', amount: 2 }));
  assert.deepEqual(posted(dup), []);
  assert.equal(refusals(dup).length, 1);
  const other = h.feed(pay({ type: 'vend.approve', requestId: 'rq-1', txId: 'D2', amount: 2 }));
  assert.equal(
    (posted(other)[0] as { outcome: string }).outcome,
    'expired',
    'a second payment for the same request must be voided',
  );
});

test('an approval for an unknown request expires; a deny for one is refused', () => {
  const h = reach.Enabled();
  assert.equal(
    (posted(h.feed(pay({ type: 'vend.approve', requestId: 'nope', txId: 'D7', amount: 1 })))[0] as { outcome: string })
      .outcome,
    'expired',
  );
  const deny = h.feed(pay({ type: 'vend.deny', requestId: 'nope', reason: 'x' }));
  assert.deepEqual(sent(deny), []);
  assert.equal(refusals(deny).length, 1);
});

test('always-idle off: a vend request without a session is denied at once', () => {
  const h = reach.Enabled(readerConfig({ alwaysIdle: false }));
  const out = h.feed(line('c,STATUS,VEND,1.00,1'));
  assert.deepEqual(sent(out), ['C,VEND,-1']);
  assert.deepEqual(posted(out), []);
});

test('sessions.allowed=false refuses session.begin and dynamic vends; true allows them again', () => {
  const h = reach.Enabled();
  h.feed(pay({ type: 'sessions.allowed', allowed: false, reason: 'disk full' }));
  const begin = h.feed(pay({ type: 'session.begin', txId: 'T5', funds: 5 }));
  assert.deepEqual(posted(begin), [
    { type: 'session.refused', txId: 'T5', reason: 'new sessions are refused: disk full' },
  ]);
  assert.deepEqual(sent(h.feed(line('c,STATUS,VEND,1.00,1'))), ['C,VEND,-1']);
  h.feed(pay({ type: 'sessions.allowed', allowed: true, reason: null }));
  assert.deepEqual(sent(h.feed(pay({ type: 'session.begin', txId: 'T5', funds: 5 }))), ['C,START,5.00']);
});

test('virtual credit: a session with that credit opens whenever the reader is enabled', () => {
  const cfg = readerConfig({ alwaysIdle: false, virtualCreditMinor: 200 });
  const h = reach.Disabled(cfg);
  const en = h.feed(line('c,STATUS,ENABLED'));
  assert.deepEqual(sent(en), ['C,START,2.00']);
  assert.deepEqual(
    readerStatus(h.model),
    { status: 'enabled', txId: null },
    'a virtual session does not block a Start',
  );
  const idle = h.feed(line('c,STATUS,IDLE,2.00'));
  assert.deepEqual(posted(idle), [], 'no payment behind a virtual session');
  const req = h.feed(line('c,STATUS,VEND,1.50,4'));
  assert.deepEqual(posted(req), [{ type: 'vend.requested', requestId: 'rq-1', price: 1.5, item: 4 }]);
  h.feed(pay({ type: 'vend.approve', requestId: 'rq-1', txId: 'D1', amount: 1.5 }));
  const ok = h.feed(line('c,VEND,SUCCESS'));
  assert.equal((posted(ok)[0] as { outcome: string }).outcome, 'success');
  assert.equal(h.state, 'SessionIdle');
  const ended = h.feed(line('c,STATUS,ENABLED'));
  assert.deepEqual(postedTypes(ended), []);
  assert.deepEqual(sent(ended), ['C,START,2.00'], 'reopened for the next consumer');
});

test('virtual credit: session.begin replaces the virtual session with a funded one', () => {
  const cfg = readerConfig({ alwaysIdle: false, virtualCreditMinor: 200 });
  const h = reach.Disabled(cfg);
  h.feed(line('c,STATUS,ENABLED'), line('c,STATUS,IDLE,2.00'));
  const begin = h.feed(pay({ type: 'session.begin', txId: 'T1', funds: 5 }));
  assert.deepEqual(sent(begin), ['C,STOP']);
  assert.deepEqual(readerStatus(h.model), { status: 'session', txId: 'T1' });
  const en = h.feed(line('c,STATUS,ENABLED'));
  assert.deepEqual(sent(en), ['C,START,5.00']);
  h.feed(line('c,STATUS,IDLE,5.00'));
  assert.deepEqual(sent(h.feed(line('c,STATUS,VEND,1.00,1'))), ['C,VEND,1.00'], 'approved locally from the funds');
});

test('virtual credit refused by the board is not retried in a loop', () => {
  const cfg = readerConfig({ alwaysIdle: false, virtualCreditMinor: 200 });
  const h = reach.Disabled(cfg);
  h.feed(line('c,STATUS,ENABLED'));
  const refused = h.feed(line('c,ERR,START -3'));
  assert.deepEqual(sent(refused), []);
  assert.equal(h.state, 'Enabled');
  assert.deepEqual(sent(h.feed(line('c,STATUS,ENABLED'))), ['C,START,2.00'], 'retried on the next ENABLED');
});

test('Harness sanity: a fresh harness is Offline', () => {
  assert.equal(new Harness().state, 'Offline');
});
