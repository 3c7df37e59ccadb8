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
  for (const where of [
    'Offline',
    'Inactive',
    'Disabled',
    'VendStatic',
    'Stopping',
    'DynamicAwaitingPayment',
  ] as const) {
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
  fc
    .constantFrom(
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
    )
    .map(line),
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
  fc
    .record({ tx: fc.constantFrom('T1', 'T2'), funds: fc.constantFrom(5, 2, 0.5) })
    .map(({ tx, funds }) => pay({ type: 'session.begin', txId: tx, funds })),
  fc.constantFrom('T1', 'T2').map((tx) => pay({ type: 'session.cancel', txId: tx, reason: 'p' })),
  fc
    .record({ n: fc.integer({ min: 1, max: 4 }), tx: fc.constantFrom('D1', 'D2') })
    .map(({ n, tx }) => pay({ type: 'vend.approve', requestId: `rq-${n}`, txId: tx, amount: 1.5 })),
  fc.integer({ min: 1, max: 4 }).map((n) => pay({ type: 'vend.deny', requestId: `rq-${n}`, reason: 'p' })),
  fc.boolean().map((allowed) => pay({ type: 'sessions.allowed', allowed, reason: allowed ? null : 'p' })),
);

/**
 * Whole steps a reader meets in the field: single random inputs alone almost never get through
 * the configuration sequence (C,0 echo, every SETCONF answered, V answered) and ENABLED, so the
 * bookkeeping below would never meet a session or a vend.
 */
const configured: ReaderInput[] = [
  { kind: 'link.up' },
  line('c,0'),
  ...new Harness().cfg.setconf.map(() => line('c,SET,OK')),
  line('v,1.0,B1'),
  line('c,STATUS,DISABLED'),
  line('c,STATUS,ENABLED'),
];
/** A dynamic answer to the vend request the reader posted last (its requestId is only known then). */
type Step = ReaderInput | 'approve-last-request' | 'deny-last-request';
const anyStep: fc.Arbitrary<Step[]> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(configured) },
  {
    weight: 4,
    arbitrary: fc
      .record({ tx: fc.constantFrom('T1', 'T2'), funds: fc.constantFrom(5, 2) })
      .map(({ tx, funds }) => [pay({ type: 'session.begin', txId: tx, funds }), line(`c,STATUS,IDLE,${funds}.00`)]),
  },
  {
    weight: 6,
    arbitrary: fc
      .record({
        price: fc.constantFrom('1.50', '4.00', '9.00'),
        item: fc.integer({ min: 1, max: 3 }),
        answer: fc.constantFrom<Step[]>([], ['approve-last-request'], ['deny-last-request']),
        end: fc.constantFrom('c,VEND,SUCCESS', 'c,ERR,VEND 1', 'c,ERR,VEND 3', null),
      })
      .map(({ price, item, answer, end }) => [
        line(`c,STATUS,VEND,${price},${item}`),
        ...answer,
        ...(end === null ? [] : [line(end)]),
      ]),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 4 })
      .map((n) => [pay({ type: 'vend.approve', requestId: `rq-${n}`, txId: `D${n}`, amount: 1.5 })]),
  },
  { weight: 4, arbitrary: anyInput.map((i) => [i]) },
);

function feedStep(h: Harness, step: Step): void {
  if (typeof step !== 'string') {
    h.feed(step);
    return;
  }
  const last = posted(h.effects)
    .filter((m) => m.type === 'vend.requested')
    .at(-1);
  if (last === undefined || last.type !== 'vend.requested') return;
  const requestId = last.requestId;
  h.feed(
    pay(
      step === 'deny-last-request'
        ? { type: 'vend.deny', requestId, reason: 'p' }
        : { type: 'vend.approve', requestId, txId: `D-${requestId}`, amount: last.price },
    ),
  );
}

test('property: every started session ends once, every approved vend gets one result', () => {
  // How many runs met each thing the bookkeeping is about: a run that never meets one checks nothing.
  const reached = {
    'session.started': 0,
    'vend.approved': 0,
    'vend.requested': 0,
    'dynamic vend.result': 0,
    'two sessions': 0,
  };
  const numRuns = 400;
  for (const virtualCreditMinor of [null, 200]) {
    fc.assert(
      fc.property(fc.array(anyStep, { minLength: 4, maxLength: 40, size: 'max' }), (steps) => {
        const h = new Harness({ ...new Harness().cfg, virtualCreditMinor, alwaysIdle: virtualCreditMinor === null });
        h.feed({ kind: 'link.up' });
        for (const step of steps.flat()) feedStep(h, step);
        h.feed({ kind: 'shutdown.force' });
        const msgs: MainToPayment[] = posted(h.effects);
        const count = (pred: (m: MainToPayment) => boolean) => msgs.filter(pred).length;
        // Walked in order: a txId may come back in a later session (the generator reuses T1/T2).
        let open: string | null = null;
        const awaitingResult = new Set<string>();
        for (const m of msgs) {
          if (m.type === 'session.started') {
            assert.equal(open, null, `session ${m.txId} started while ${open} was still open`);
            open = m.txId;
          }
          if (m.type === 'session.ended') {
            assert.equal(m.txId, open, `session.ended for ${m.txId}, open: ${open}`);
            open = null;
          }
          if (m.type === 'vend.approved') {
            assert.equal(m.txId, open, 'a static vend is approved inside its session');
            const key = `${m.txId}#${m.vendSeq}`;
            assert.ok(!awaitingResult.has(key), `vend ${key} approved twice`);
            awaitingResult.add(key);
          }
          if (m.type === 'vend.result' && m.vendSeq !== null) {
            const key = `${m.txId}#${m.vendSeq}`;
            assert.ok(awaitingResult.delete(key), `vend.result for ${key}, which is not awaiting one`);
          }
          if (m.type === 'vend.requested') {
            // Answered at most once with a real outcome (expired answers are for unusable approvals).
            assert.ok(
              count((x) => x.type === 'vend.result' && x.requestId === m.requestId && x.outcome !== 'expired') <= 1,
            );
          }
        }
        assert.equal(open, null, 'every started session ended');
        assert.deepEqual([...awaitingResult], [], 'every approved vend got its result');
        assert.equal(h.state, 'Offline');
        for (const k of ['session.started', 'vend.approved', 'vend.requested'] as const)
          if (count((x) => x.type === k) > 0) reached[k] += 1;
        if (count((x) => x.type === 'vend.result' && x.requestId !== null && x.outcome !== 'expired') > 0)
          reached['dynamic vend.result'] += 1;
        if (count((x) => x.type === 'session.started') > 1) reached['two sessions'] += 1;
      }),
      { numRuns, seed: 20240611 },
    );
  }
  for (const [what, runs] of Object.entries(reached)) {
    assert.ok(
      runs >= numRuns / 4,
      `only ${runs} of ${2 * numRuns} runs met ${what}: the generator no longer reaches it`,
    );
  }
});
