/**
 * What an approved vend is worth, for every way its vend sequence can end (docs/decisions/real-vending-machines.md item
 * 1):
 * MDB 4.2 7.4.7 says "a reset between VEND APPROVED and VEND SUCCESS shall be interpreted as a
 * VEND SUCCESS", so c,ERR,VEND 5, c,STATUS,INACTIVE and a board restart after the approval
 * report `reset` and the session counts the vend as sold (charged); a failure, a consumer
 * cancel, a disable, a lost link, a silent board, a timeout and a forced stop do not.
 * Table-driven over both flows (static session: vend.result + session.ended's count; dynamic:
 * vend.result, which decides Void or not on the payment side).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isChargedVend } from '../../../src/ipc/vend-outcome.js';
import type { MainToPayment, VendOutcome } from '../../../src/ipc/messages.js';
import type { ReaderInput } from '../../../src/mdb/reader/index.js';
import { Harness, line, pay, posted, reach, timeout } from './helpers.js';

interface Ending {
  name: string;
  inputs: ReaderInput[];
  outcome: VendOutcome;
}

const endings: Ending[] = [
  { name: 'c,VEND,SUCCESS', inputs: [line('c,VEND,SUCCESS')], outcome: 'success' },
  { name: 'c,ERR,VEND 5 (reset during the vend)', inputs: [line('c,ERR,VEND 5')], outcome: 'reset' },
  {
    name: 'c,ERR,VEND 5 then c,STATUS,INACTIVE',
    inputs: [line('c,ERR,VEND 5'), line('c,STATUS,INACTIVE')],
    outcome: 'reset',
  },
  { name: 'c,STATUS,INACTIVE alone (VMC reset)', inputs: [line('c,STATUS,INACTIVE')], outcome: 'reset' },
  { name: 'an unasked version line (board restart)', inputs: [line('v,2.1,B9')], outcome: 'reset' },
  { name: 'c,ERR,VEND 3 (dispense failed)', inputs: [line('c,ERR,VEND 3')], outcome: 'failed' },
  { name: 'c,ERR,VEND 1 (cancelled)', inputs: [line('c,ERR,VEND 1')], outcome: 'cancelled' },
  { name: 'c,STATUS,DISABLED (a disable is no reset)', inputs: [line('c,STATUS,DISABLED')], outcome: 'failed' },
  {
    name: 'serial link lost (USB unplugged)',
    inputs: [{ kind: 'link.down', reason: 'unplugged' }],
    outcome: 'timeout',
  },
  { name: 'board silent past the link watchdog', inputs: [{ kind: 'link.silent' }], outcome: 'timeout' },
  { name: 'no result within mdb.vendResultTimeoutMs', inputs: [timeout('vend-result')], outcome: 'timeout' },
  { name: 'forced shutdown', inputs: [{ kind: 'shutdown.force' }], outcome: 'timeout' },
];

function results(out: MainToPayment[]): Array<Extract<MainToPayment, { type: 'vend.result' }>> {
  return out.flatMap((m) => (m.type === 'vend.result' ? [m] : []));
}

test('the charging rule: success and reset are charged, nothing else', () => {
  const all: VendOutcome[] = ['success', 'failed', 'cancelled', 'reset', 'timeout', 'expired'];
  assert.deepEqual(all.filter(isChargedVend), ['success', 'reset']);
});

for (const e of endings) {
  const charged = isChargedVend(e.outcome);

  test(
    `static session, vend of 1.15 approved, then ${e.name}: ` +
      `vend.result ${e.outcome}, ${charged ? 'charged' : 'not charged'}`,
    () => {
      const h: Harness = reach.VendStatic();
      // VendStatic approved 1.50; use a second session-funded vend at 1.15 to keep amounts off whole units.
      h.feed(line('c,VEND,SUCCESS'), line('c,STATUS,VEND,1.15,13'));
      const out = posted(h.feed(...e.inputs));
      const r = results(out);
      assert.equal(r.length, 1, `exactly one vend.result: ${JSON.stringify(out)}`);
      assert.equal(r[0]!.outcome, e.outcome);
      assert.equal(r[0]!.txId, 'T1');
      assert.equal(r[0]!.vendSeq, 2);
      // The session's own count: what session.ended reports now, or after the VMC ends the session.
      let ended = out.find((m) => m.type === 'session.ended');
      if (ended === undefined) ended = posted(h.feed(line('c,STATUS,ENABLED'))).find((m) => m.type === 'session.ended');
      assert.ok(ended && ended.type === 'session.ended', 'the session ends exactly once');
      assert.equal(ended.vendsSucceeded, charged ? 2 : 1);
      assert.equal(Math.round(ended.amountVended * 100), charged ? 265 : 150);
    },
  );

  test(`dynamic vend of 4.35 approved, then ${e.name}: vend.result ${e.outcome}`, () => {
    const h = reach.Enabled();
    h.feed(line('c,STATUS,VEND,4.35,21'), pay({ type: 'vend.approve', requestId: 'rq-1', txId: 'D1', amount: 4.35 }));
    const r = results(posted(h.feed(...e.inputs)));
    assert.equal(r.length, 1);
    assert.deepEqual([r[0]!.txId, r[0]!.requestId, r[0]!.outcome], ['D1', 'rq-1', e.outcome]);
  });
}

test('a reset before the approval (vend request pending) is no sale: the request just ends', () => {
  for (const input of [line('c,ERR,VEND 5'), line('c,STATUS,INACTIVE'), line('v,2.1,B9')]) {
    const h = reach.DynamicAwaitingPayment();
    const out = posted(h.feed(input));
    assert.equal(results(out).length, 0, JSON.stringify(out));
    assert.equal(out.filter((m) => m.type === 'vend.request.ended').length, 1);
  }
});

test('a late c,VEND,SUCCESS after a reset already charged the vend is refused: never charged twice', () => {
  const h = reach.DynamicAwaitingResult();
  h.feed(line('c,ERR,VEND 5'));
  const out = h.feed(line('c,VEND,SUCCESS'));
  assert.equal(results(posted(out)).length, 0);
  assert.ok(out.some((x) => x.kind === 'refused'));
});
