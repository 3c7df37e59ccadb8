/**
 * Virtual-credit sessions (mdb.virtualCredit, for VMCs without always-idle) and what happens to a
 * paid Start queued behind one (src/mdb/reader common.ts, payment-input.ts, transition.ts). A
 * virtual session holds no payment: the payment side never hears of it, and a paid session
 * replaces it. Timers are fed in as inputs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ReaderConfig } from '../../../src/mdb/reader/index.js';
import { armed, Harness, line, pay, posted, reach, readerConfig, refusals, sent, timeout } from './helpers.js';

const virtual = (over: Partial<ReaderConfig> = {}) =>
  readerConfig({ alwaysIdle: false, virtualCreditMinor: 100, ...over });

/** An open virtual-credit session (credit 1.00). */
function virtualIdle(over: Partial<ReaderConfig> = {}): Harness {
  const h = reach.Enabled(virtual(over));
  assert.equal(h.state, 'Starting', 'ENABLED opens a virtual session');
  h.feed(line('c,STATUS,IDLE,1.00'));
  assert.ok(h.model.state.kind === 'SessionIdle' && h.model.state.session.txId === null);
  return h;
}

/** A virtual session being replaced: C,STOP written, the paid Start T2 queued behind it. */
function paidStartQueued(): Harness {
  const h = virtualIdle();
  h.feed(pay({ type: 'session.begin', txId: 'T2', funds: 4 }));
  assert.ok(h.model.state.kind === 'Stopping' && h.model.state.then?.kind === 'static');
  return h;
}

/** A Dynamic QR vend paid and dispensed inside the virtual session. */
function dynamicVendDone(h: Harness) {
  h.feed(line('c,STATUS,VEND,1.00,3'), pay({ type: 'vend.approve', requestId: 'rq-1', txId: 'D1', amount: 1 }));
  return h.feed(line('c,VEND,SUCCESS'));
}

test('ENABLED opens a virtual-credit session and tells the payment side nothing', () => {
  const h = reach.Disabled(virtual());
  const out = h.feed(line('c,STATUS,ENABLED'));
  assert.deepEqual(sent(out), ['C,START,1.00']);
  assert.deepEqual(posted(out), []);
});

test('a virtual session stays open after a vend with multi-vend on, even with its credit used up', () => {
  const h = virtualIdle();
  const out = dynamicVendDone(h);
  assert.equal(h.state, 'SessionIdle');
  assert.ok(!sent(out).includes('C,STOP'));
});

test('a virtual session ends after each vend when the VMC has no multi-vend', () => {
  const h = virtualIdle({ multiVend: false });
  const out = dynamicVendDone(h);
  assert.ok(h.model.state.kind === 'Stopping');
  assert.equal(h.model.state.reason, 'complete');
  assert.ok(sent(out).includes('C,STOP'));
});

test('an idle virtual session arms the refresh timer only when mdb.sessionRefreshMs is set', () => {
  const off = virtualIdle();
  assert.ok(!armed(dynamicVendDone(off)).includes('session-refresh'), 'no refresh without sessionRefreshMs');
  const on = virtualIdle({ sessionRefreshMs: 240_000 });
  const out = dynamicVendDone(on);
  assert.ok(out.some((e) => e.kind === 'timer.arm' && e.timer === 'session-refresh' && e.ms === 240_000));
  assert.ok(!armed(out).includes('session-idle'), 'a virtual session has no idle timeout');
});

test('a stale session-idle timer does not end a virtual session', () => {
  const h = virtualIdle();
  const out = h.feed(timeout('session-idle'));
  assert.deepEqual(sent(out), []);
  assert.deepEqual(refusals(out), ['timeout session-idle: stale in state SessionIdle']);
  assert.equal(h.state, 'SessionIdle');
});

test('the link lost while a virtual session opens: nothing is posted, every timer is cancelled', () => {
  const h = reach.Enabled(virtual());
  assert.equal(h.state, 'Starting');
  const out = h.feed({ kind: 'link.down', reason: 'unplugged' });
  assert.deepEqual(posted(out), [], 'no session.refused for a session the payment side never asked for');
  const cancelled = out.flatMap((e) => (e.kind === 'timer.cancel' ? [e.timer] : []));
  assert.deepEqual(cancelled, [
    'session-idle',
    'vend-result',
    'payment-wait',
    'board-answer',
    'config-answer',
    'session-refresh',
  ]);
});

test('the board not confirming a virtual session: it is stopped and not retried before the next ENABLED', () => {
  const h = reach.Enabled(virtual());
  const out = h.feed(timeout('board-answer'));
  assert.deepEqual(sent(out), ['C,STOP']);
  assert.deepEqual(posted(out), []);
  assert.deepEqual(h.model.state, { kind: 'Enabled', holdVirtual: true });
  assert.deepEqual(sent(h.feed(line('c,STATUS,ENABLED'))), ['C,START,1.00'], 'the next ENABLED retries');
});

test('a paid Start the board did not confirm is refused, and the virtual session comes back', () => {
  const h = paidStartQueued();
  h.feed(line('c,STATUS,ENABLED')); // the virtual session closed: C,START for T2
  assert.ok(h.model.state.kind === 'Starting' && h.model.state.purpose.kind === 'static');
  const out = h.feed(timeout('board-answer'));
  assert.deepEqual(posted(out), [
    { type: 'session.refused', txId: 'T2', reason: 'the board did not confirm the session in time' },
  ]);
  assert.deepEqual(sent(out), ['C,STOP', 'C,START,1.00']);
});

test('a paid Start queued behind a virtual session: a repeated session.begin for it is refused quietly', () => {
  const h = paidStartQueued();
  const out = h.feed(pay({ type: 'session.begin', txId: 'T2', funds: 4 }));
  assert.deepEqual(posted(out), [], 'T2 is not refused: it opens once the virtual session closed');
  assert.deepEqual(refusals(out), ['session.begin: session T2 is already open or opening']);
  h.feed(line('c,STATUS,ENABLED'));
  assert.ok(
    h.model.state.kind === 'Starting' && h.model.state.purpose.kind === 'static' && h.model.state.purpose.txId === 'T2',
  );
});

test('a virtual session refreshing itself: a session.begin meanwhile is refused as the previous one closing', () => {
  const h = virtualIdle({ sessionRefreshMs: 240_000 });
  h.feed(timeout('session-refresh'));
  assert.ok(h.model.state.kind === 'Stopping' && h.model.state.then === null);
  const out = h.feed(pay({ type: 'session.begin', txId: 'T3', funds: 2 }));
  assert.deepEqual(posted(out), [
    { type: 'session.refused', txId: 'T3', reason: 'the previous session is still closing' },
  ]);
});

test(
  'a virtual session that does not close in time: the paid Start ' +
    'queued behind it is refused, a fresh virtual session opens',
  () => {
    const h = paidStartQueued();
    const out = h.feed(timeout('board-answer'));
    assert.deepEqual(posted(out), [
      { type: 'session.refused', txId: 'T2', reason: 'the previous session did not close in time' },
    ]);
    assert.equal(sent(out).at(-1), 'C,START,1.00', 'the reader is enabled and reopens its virtual session');
  },
);

test('the link lost while a virtual session closes: the paid Start queued behind it is refused', () => {
  const h = paidStartQueued();
  const out = h.feed({ kind: 'link.down', reason: 'unplugged' });
  assert.deepEqual(posted(out), [{ type: 'session.refused', txId: 'T2', reason: 'serial link lost: unplugged' }]);
});

test('no virtual session opens while sessions are refused, out of service, held or shutting down', () => {
  const cases: Array<[string, (h: Harness) => void]> = [
    ['sessions refused', (h) => h.feed(pay({ type: 'sessions.allowed', allowed: false, reason: 'gateway down' }))],
    ['out of service', (h) => h.feed(pay({ type: 'reader.service', outOfService: true }))],
    ['held', (h) => h.feed({ kind: 'hold', reason: 'reset loop' })],
    ['shutting down', (h) => h.feed({ kind: 'shutdown' })],
  ];
  for (const [name, put] of cases) {
    const h = reach.Disabled(virtual());
    put(h);
    const out = h.feed(line('c,STATUS,ENABLED'));
    assert.ok(!sent(out).some((c) => c.startsWith('C,START')), name);
  }
});

test('mdb.multiVend off applies to virtual sessions only: a paid session with funds left stays open on a vend', () => {
  const h = reach.SessionIdle(readerConfig({ multiVend: false })); // T1, funds 5.00
  h.feed(line('c,STATUS,VEND,1.50,12'));
  const out = h.feed(line('c,VEND,SUCCESS'));
  assert.equal(h.state, 'SessionIdle');
  assert.ok(!sent(out).includes('C,STOP'));
});
