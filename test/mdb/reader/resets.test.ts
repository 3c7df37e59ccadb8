/**
 * Resets and losses in every state, table-driven: whatever the reader was doing, it ends up in a
 * known state and has answered everything in flight exactly once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Harness, line, posted, reach, refusals, sent } from './helpers.js';
import type { MainToPayment } from '../../../src/ipc/messages.js';

type Situation = keyof typeof reach;

/** What each situation has in flight, and so what a reset must answer (type + the field that matters). */
const inFlight: Record<Situation, Array<Partial<MainToPayment>>> = {
  Offline: [],
  Inactive: [],
  Disabled: [],
  Enabled: [],
  Starting: [{ type: 'session.refused', txId: 'T1' }],
  SessionIdle: [{ type: 'session.ended', txId: 'T1' }],
  VendStatic: [
    { type: 'vend.result', txId: 'T1' },
    { type: 'session.ended', txId: 'T1' },
  ],
  Stopping: [{ type: 'session.ended', txId: 'T1' }],
  DynamicAwaitingPayment: [{ type: 'vend.request.ended', requestId: 'rq-1' }],
  DynamicAwaitingResult: [{ type: 'vend.result', txId: 'D1' }],
};

function check(out: MainToPayment[], expected: Array<Partial<MainToPayment>>, label: string): void {
  const relevant = out.filter((m) => m.type !== 'board.info');
  assert.equal(relevant.length, expected.length, `${label}: ${JSON.stringify(relevant)}`);
  expected.forEach((e, i) => {
    for (const [k, v] of Object.entries(e))
      assert.equal((relevant[i] as Record<string, unknown>)[k], v, `${label}: ${k}`);
  });
}

const situations = Object.keys(reach) as Situation[];

for (const name of situations) {
  test(`VMC reset (c,STATUS,INACTIVE) in ${name}`, () => {
    const h: Harness = reach[name]();
    const out = h.feed(line('c,STATUS,INACTIVE'));
    if (name === 'Offline') {
      assert.equal(refusals(out).length, 1, 'a line while offline is refused');
      assert.equal(h.state, 'Offline');
      return;
    }
    assert.equal(h.state, 'Inactive');
    check(posted(out), inFlight[name], name);
    const results = posted(out).filter((m) => m.type === 'vend.result');
    for (const r of results) assert.equal((r as { outcome: string }).outcome, 'reset');
    const ends = posted(out).filter((m) => m.type === 'session.ended');
    for (const e of ends)
      assert.equal((e as { reason: string }).reason, name === 'Stopping' ? 'reader-cancel' : 'vmc-reset');
    // The reader comes back when the VMC sets it up again.
    h.feed(line('c,STATUS,DISABLED'), line('c,STATUS,ENABLED'));
    assert.equal(h.state, 'Enabled');
  });

  test(`board restart (unasked v,... line) in ${name}`, () => {
    const h: Harness = reach[name]();
    const out = h.feed(line('v,9.9,B2'));
    if (name === 'Offline') {
      assert.equal(h.state, 'Offline');
      return;
    }
    assert.equal(h.state, 'Inactive');
    check(posted(out), inFlight[name], name);
    assert.deepEqual(sent(out).slice(0, 1), ['C,0'], 'the configuration is sent again');
    assert.ok(!sent(out).includes('C,1'), 'C,1 waits for every SETCONF answer');
    const answered = h.feed(line('c,0'), ...h.cfg.setconf.map(() => line('c,SET,OK')));
    assert.deepEqual(sent(answered), ['C,1', 'V']);
  });

  test(`link lost in ${name}`, () => {
    const h: Harness = reach[name]();
    const out = h.feed({ kind: 'link.down', reason: 'unplugged' });
    assert.equal(h.state, 'Offline');
    check(posted(out), inFlight[name], name);
    for (const e of posted(out).filter((m) => m.type === 'session.ended')) {
      assert.equal((e as { reason: string }).reason, name === 'Stopping' ? 'reader-cancel' : 'link-lost');
    }
    const up = h.feed({ kind: 'link.up' });
    assert.equal(sent(up)[0], 'C,0', 'reconfigured after the reopen');
    assert.equal(h.state, 'Inactive');
  });

  test(`link watchdog (silent link) in ${name}`, () => {
    const h: Harness = reach[name]();
    const out = h.feed({ kind: 'link.silent' });
    assert.equal(h.state, 'Offline');
    check(posted(out), inFlight[name], name);
    assert.deepEqual(
      out.filter((e) => e.kind === 'link.restart').map((e) => e.kind),
      ['link.restart'],
    );
  });

  test(`reader disabled by the VMC in ${name}`, () => {
    const h: Harness = reach[name]();
    const out = h.feed(line('c,STATUS,DISABLED'));
    if (name === 'Offline') return;
    assert.equal(h.state, 'Disabled');
    check(posted(out), inFlight[name], name);
  });
}
