/**
 * Inputs out of sequence are refused with a reason (never thrown), shutdown ends things cleanly,
 * and a property test: any sequence of inputs keeps the bookkeeping whole.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Harness, line, pay, posted, postedTypes, reach, refusals, sent, timeout } from './helpers.js';
import type { ReaderInput } from '../../../src/mdb/reader/index.js';
import type { MainToPayment } from '../../../src/ipc/messages.js';

test('out-of-sequence board lines are refused and change nothing', () => {
  const cases: Array<[keyof typeof reach, string]> = [
    ['Enabled', 'c,VEND,SUCCESS'],
    ['Enabled', 'c,ERR,VEND 3'],
    ['SessionIdle', 'c,VEND,SUCCESS'],
    ['Disabled', 'c,STATUS,IDLE,1.00'],
    ['Enabled', 'c,ERR,SOMETHING'],
    ['Starting', 'c,STATUS,ENABLED'],
  ];
  for (const [where, text] of cases) {
    const h = reach[where]();
    const before = JSON.stringify(h.model);
    const out = h.feed(line(text));
    assert.equal(refusals(out).length, 1, `${where} + ${text}`);
    assert.deepEqual(postedTypes(out), [], `${where} + ${text}`);
    assert.equal(JSON.stringify(h.model), before, `${where} + ${text} leaves the model as it was`);
  }
});

test('a second vend request while one is in progress is refused', () => {
  const h = reach.VendStatic();
  const out = h.feed(line('c,STATUS,VEND,1.00,2'));
  assert.equal(refusals(out).length, 1);
  assert.deepEqual(sent(out), []);
});

test('vend requests while not ready are denied on the wire', () => {
  for (const where of ['Inactive', 'Disabled', 'Starting', 'Stopping'] as const) {
    const h = reach[where]();
    assert.deepEqual(sent(h.feed(line('c,STATUS,VEND,1.00,2'))), ['C,VEND,-1'], where);
  }
});

test('session.begin is refused with a reason in every state that cannot take it', () => {
  for (const where of ['Offline', 'Inactive', 'Disabled', 'VendStatic', 'Stopping', 'DynamicAwaitingPayment'] as const) {
    const h = reach[where]();
    const out = h.feed(pay({ type: 'session.begin', txId: 'NEW', funds: 5 }));
    assert.deepEqual(postedTypes(out), ['session.refused'], where);
    assert.ok((posted(out)[0] as { reason: string }).reason.length > 0);
    assert.deepEqual(sent(out), [], where);
  }
  const h = reach.SessionIdle();
  const dup = h.feed(pay({ type: 'session.begin', txId: 'T1', funds: 5 }));
  assert.deepEqual(postedTypes(dup), [], 'a repeated begin for the open session is only refused in the log');
  assert.equal(refusals(dup).length, 1);
  const zero = reach.Enabled().feed(pay({ type: 'session.begin', txId: 'Z', funds: 0 }));
  assert.deepEqual(postedTypes(zero), ['session.refused']);
});

test('stale timeouts are refused', () => {
  const h = reach.Enabled();
  for (const t of ['session-idle', 'vend-result', 'payment-wait', 'board-answer', 'config-answer'] as const) {
    const out = h.feed(timeout(t));
    assert.equal(refusals(out).length, 1, t);
    assert.equal(h.state, 'Enabled');
  }
});

test('shutdown: an idle session is stopped, new sessions refused', () => {
  const h = reach.SessionIdle();
  assert.deepEqual(sent(h.feed({ kind: 'shutdown' })), ['C,STOP']);
  h.feed(line('c,STATUS,ENABLED'));
  assert.equal(h.state, 'Enabled');
  assert.deepEqual(postedTypes(h.feed(pay({ type: 'session.begin', txId: 'T2', funds: 1 }))), ['session.refused']);
});

test('shutdown: a vend being dispensed finishes, then the session is stopped', () => {
  const h = reach.VendStatic();
  assert.deepEqual(sent(h.feed({ kind: 'shutdown' })), []);
  const out = h.feed(line('c,VEND,SUCCESS'));
  assert.deepEqual(postedTypes(out), ['vend.result']);
  assert.deepEqual(sent(out), ['C,STOP']);
});

test('shutdown: a dynamic request waiting for payment is denied', () => {
  const h = reach.DynamicAwaitingPayment();
  const out = h.feed({ kind: 'shutdown' });
  assert.deepEqual(sent(out), ['C,VEND,-1']);
  assert.deepEqual(postedTypes(out), ['vend.request.ended']);
});

test('shutdown.force fails the vend in flight, ends the session and disables the reader', () => {
  const h = reach.VendStatic();
  const out = h.feed({ kind: 'shutdown.force' });
  assert.deepEqual(postedTypes(out), ['vend.result', 'session.ended']);
  assert.equal((posted(out)[0] as { outcome: string }).outcome, 'timeout');
  assert.deepEqual(sent(out), ['C,0']);
  assert.equal(h.state, 'Offline');
});

// ---- property: bookkeeping stays whole under any sequence ------------------------------------

const anyInput: fc.Arbitrary<ReaderInput> = fc.oneof(
  fc.constantFrom(
    'c,STATUS,INACTIVE',
    'c,STATUS,DISABLED',
    'c,STATUS,ENABLED',
    'c,STATUS,IDLE',
    'c,STATUS,IDLE,5.00',
    'c,STATUS,IDLE,2.00',
    'c,STATUS,VEND,1.50,1',
    'c,STATUS,VEND,4.00,2',
    'c,STATUS,VEND,9.00,3',
    'c,VEND,SUCCESS',
    'c,ERR,VEND 1',
    'c,ERR,VEND 3',
    'c,ERR,VEND 5',
    'c,ERR,START -3',
    'c,ERR,STOP -1',
    'v,1.0,B1',
    'r,ACK',
  ).map(line),
  fc.constantFrom<ReaderInput>(
    { kind: 'link.up' },
    { kind: 'link.down', reason: 'x' },
    { kind: 'link.silent' },
    { kind: 'shutdown' },
    timeout('session-idle'),
    timeout('vend-result'),
    timeout('payment-wait'),
    timeout('board-answer'),
    timeout('config-answer'),
  ),
  fc.record({ tx: fc.constantFrom('T1', 'T2'), funds: fc.constantFrom(5, 2, 0.5) }).map(({ tx, funds }) => pay({ type: 'session.begin', txId: tx, funds })),
  fc.constantFrom('T1', 'T2').map((tx) => pay({ type: 'session.cancel', txId: tx, reason: 'p' })),
  fc.record({ n: fc.integer({ min: 1, max: 4 }), tx: fc.constantFrom('D1', 'D2') }).map(({ n, tx }) => pay({ type: 'vend.approve', requestId: `rq-${n}`, txId: tx, amount: 1.5 })),
  fc.integer({ min: 1, max: 4 }).map((n) => pay({ type: 'vend.deny', requestId: `rq-${n}`, reason: 'p' })),
  fc.boolean().map((allowed) => pay({ type: 'sessions.allowed', allowed, reason: allowed ? null : 'p' })),
);

test('property: every started session ends once, every approved vend gets one result', () => {
  for (const virtualCreditMinor of [null, 200]) {
    fc.assert(
      fc.property(fc.array(anyInput, { maxLength: 60 }), (inputs) => {
        const h = new Harness({ ...new Harness().cfg, virtualCreditMinor, alwaysIdle: virtualCreditMinor === null });
        h.feed({ kind: 'link.up' }, ...inputs, { kind: 'shutdown.force' });
        const msgs: MainToPayment[] = posted(h.effects);
        const count = (pred: (m: MainToPayment) => boolean) => msgs.filter(pred).length;
        for (const m of msgs) {
          if (m.type === 'session.started') {
            assert.equal(count((x) => x.type === 'session.ended' && x.txId === m.txId), count((x) => x.type === 'session.started' && x.txId === m.txId));
          }
          if (m.type === 'vend.approved') {
            assert.equal(count((x) => x.type === 'vend.result' && x.txId === m.txId && x.vendSeq === m.vendSeq), 1, JSON.stringify(m));
          }
          if (m.type === 'vend.requested') {
            // Answered at most once with a real outcome (expired answers are for unusable approvals).
            assert.ok(count((x) => x.type === 'vend.result' && x.requestId === m.requestId && x.outcome !== 'expired') <= 1);
          }
        }
        assert.equal(h.state, 'Offline');
      }),
      { numRuns: 400, seed: 20240611 },
    );
  }
});
