/** Authorization-first (static QR): session.begin -> C,START, local approvals, funds, session end. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Harness,
  armed,
  line,
  linkUp,
  pay,
  posted,
  postedTypes,
  reach,
  readerConfig,
  refusals,
  sent,
  timeout,
} from './helpers.js';
import { ageDeniedItems, readerStatus } from '../../../src/mdb/reader/index.js';

test('link up sends the configuration: C,0, every C,SETCONF; C,1 and V once all were answered', () => {
  const h = new Harness();
  const out = h.feed(linkUp);
  assert.deepEqual(sent(out), [
    'C,0',
    'C,SETCONF,mdb-address=0x10',
    'C,SETCONF,mdb-always-idle=1',
    'C,SETCONF,mdb-currency-code=0x1978',
    'C,SETCONF,mdb-decimal-places=2',
    'C,SETCONF,mdb-scale-factor=1',
    'C,SETCONF,mdb-timeout-vend=60',
  ]);
  assert.deepEqual(sent(h.feed(line('c,0'), ...h.cfg.setconf.map(() => line('c,SET,OK')))), ['C,1', 'V']);
  assert.equal(h.state, 'Inactive');
});

test('configuration not answered (no v line) in time: the link is restarted', () => {
  const h = new Harness();
  assert.ok(armed(h.feed(linkUp)).includes('config-answer'));
  h.feed(line('c,STATUS,INACTIVE'), line('c,STATUS,DISABLED'));
  const out = h.feed(timeout('config-answer'));
  assert.deepEqual(out.filter((e) => e.kind === 'link.restart').length, 1);
  assert.equal(h.state, 'Offline');
  const answered = new Harness();
  answered.feed(linkUp, line('c,0'), ...answered.cfg.setconf.map(() => line('c,SET,OK')), line('v,1,2'));
  assert.equal(refusals(answered.feed(timeout('config-answer'))).length, 1, 'answered: the timer is stale');
});

test('the answer to V is posted as board.info', () => {
  const h = new Harness();
  h.feed(linkUp, line('c,0'), ...h.cfg.setconf.map(() => line('c,SET,OK')));
  const out = h.feed(line('v,2.1.0,MDB-42'));
  assert.deepEqual(posted(out), [{ type: 'board.info', firmware: '2.1.0', boardId: 'MDB-42' }]);
  assert.equal(h.model.versionAsked, false);
  assert.deepEqual(sent(out), [], 'an asked-for version does not reconfigure');
});

test('the VMC sets the reader up: Inactive -> Disabled -> Enabled -> Disabled -> Enabled', () => {
  const h = reach.Inactive();
  h.feed(line('c,STATUS,DISABLED'));
  assert.equal(h.state, 'Disabled');
  h.feed(line('c,STATUS,ENABLED'));
  assert.equal(h.state, 'Enabled');
  h.feed(line('c,STATUS,DISABLED'));
  assert.equal(h.state, 'Disabled');
  h.feed(line('c,STATUS,ENABLED'));
  assert.deepEqual(readerStatus(h.model), { status: 'enabled', txId: null });
});

test('session.begin in Enabled writes C,START with the funds; IDLE confirms it', () => {
  const h = reach.Enabled();
  const begin = h.feed(pay({ type: 'session.begin', txId: 'T1', funds: 5 }));
  assert.deepEqual(sent(begin), ['C,START,5.00']);
  assert.deepEqual(armed(begin), ['board-answer']);
  assert.equal(h.state, 'Starting');
  assert.deepEqual(readerStatus(h.model), { status: 'session', txId: 'T1' });
  const idle = h.feed(line('c,STATUS,IDLE,5.00'));
  assert.deepEqual(posted(idle), [{ type: 'session.started', txId: 'T1', funds: 5 }]);
  assert.deepEqual(armed(idle), ['session-idle']);
  assert.equal(h.state, 'SessionIdle');
});

test('the board confirming less than asked caps the funds', () => {
  const h = reach.Starting();
  const out = h.feed(line('c,STATUS,IDLE,3.00'));
  assert.deepEqual(posted(out), [{ type: 'session.started', txId: 'T1', funds: 3 }]);
  const vend = h.feed(line('c,STATUS,VEND,3.50,1'));
  assert.deepEqual(sent(vend), ['C,VEND,-1']);
});

test('the board refusing C,START (reader not enabled) answers session.refused', () => {
  const h = reach.Starting();
  const out = h.feed(line('c,ERR,START -3'));
  assert.deepEqual(postedTypes(out), ['session.refused']);
  assert.match((posted(out)[0] as { reason: string }).reason, /START -3/);
  assert.equal(h.state, 'Enabled');
});

test('no answer to C,START in time: C,STOP to be sure, and session.refused', () => {
  const h = reach.Starting();
  const out = h.feed(timeout('board-answer'));
  assert.deepEqual(sent(out), ['C,STOP']);
  assert.deepEqual(postedTypes(out), ['session.refused']);
  assert.equal(h.state, 'Enabled');
});

test('a vend within the funds is approved locally: the approval is the first effect, with the vend to journal', () => {
  const h = reach.SessionIdle();
  const out = h.feed(line('c,STATUS,VEND,1.50,12'));
  // The machine loop journals `approval` just before it writes C,VEND (docs/operations.md, "The vend journal").
  const approval = { flow: 'static', txId: 'T1', vendSeq: 1, item: 12, price: 1.5 };
  assert.deepEqual(out[0], { kind: 'send', command: { kind: 'vend-approve', amount: 1.5 }, approval });
  assert.deepEqual(posted(out), [{ type: 'vend.approved', txId: 'T1', vendSeq: 1, price: 1.5, item: 12 }]);
  assert.deepEqual(armed(out), ['vend-result']);
  assert.equal(h.state, 'Vend');
  assert.deepEqual(readerStatus(h.model), { status: 'vend', txId: 'T1' });
});

test('a vend above the remaining funds is denied locally and the session stays open', () => {
  const h = reach.SessionIdle();
  const out = h.feed(line('c,STATUS,VEND,5.01,3'));
  assert.deepEqual(sent(out), ['C,VEND,-1']);
  assert.deepEqual(posted(out), [
    {
      type: 'vend.denied',
      txId: 'T1',
      price: 5.01,
      item: 3,
      reason: 'price above the remaining funds',
      ageLimit: null,
    },
  ]);
  assert.equal(h.state, 'SessionIdle');
});

test('staticQr.verifyAge off: an age-restricted item is denied locally, saying why; other items sell', () => {
  const h = reach.SessionIdle(readerConfig({ ageDeniedItems: { 30: 18 } }));
  const out = h.feed(line('c,STATUS,VEND,2.00,30'));
  assert.deepEqual(sent(out), ['C,VEND,-1']);
  assert.deepEqual(posted(out), [
    {
      type: 'vend.denied',
      txId: 'T1',
      price: 2,
      item: 30,
      reason: 'age-restricted item (18+): the static QR authorization does not verify age',
      ageLimit: 18,
    },
  ]);
  assert.equal(h.state, 'SessionIdle', 'the session goes on');
  assert.deepEqual(sent(h.feed(line('c,STATUS,VEND,2.00,12'))), ['C,VEND,2.00']);
});

test('ageDeniedItems: only with verifyAge off, only items with an age limit', () => {
  const catalog = { '30': { ageLimit: 18 }, '31': { ageLimit: 16 }, '12': { ageLimit: null }, '13': { ageLimit: 0 } };
  assert.deepEqual(ageDeniedItems(false, catalog), { 30: 18, 31: 16 });
  assert.deepEqual(ageDeniedItems(true, catalog), {});
});

test('multi-vend: funds are booked per success; used-up funds end the session (reader-cancel)', () => {
  const h = reach.SessionIdle(); // 5.00
  h.feed(line('c,STATUS,VEND,1.50,1'), line('c,VEND,SUCCESS')); // 3.50 left
  h.feed(line('c,STATUS,VEND,2.00,2'), line('c,VEND,SUCCESS')); // 1.50 left
  const denied = h.feed(line('c,STATUS,VEND,2.00,3'));
  assert.deepEqual(sent(denied), ['C,VEND,-1']);
  const failed = h.feed(line('c,STATUS,VEND,1.50,4'), line('c,ERR,VEND 3')); // failure costs nothing
  assert.equal(posted(failed).find((m) => m.type === 'vend.result')?.type, 'vend.result');
  assert.deepEqual(
    posted(failed).filter((m) => m.type === 'vend.result'),
    [{ type: 'vend.result', txId: 'T1', requestId: null, vendSeq: 3, outcome: 'failed', detail: 'c,ERR,VEND 3' }],
  );
  const last = h.feed(line('c,STATUS,VEND,1.50,5'), line('c,VEND,SUCCESS'));
  assert.deepEqual(sent(last), ['C,VEND,1.50', 'C,STOP'], 'no funds left: the reader ends the session');
  assert.equal(h.state, 'Stopping');
  const end = h.feed(line('c,STATUS,ENABLED'));
  assert.deepEqual(posted(end), [
    { type: 'session.ended', txId: 'T1', reason: 'reader-cancel', vendsSucceeded: 3, amountVended: 5 },
  ]);
  const vendSeqs = posted(h.effects).flatMap((m) => (m.type === 'vend.approved' ? [m.vendSeq] : []));
  assert.deepEqual(vendSeqs, [1, 2, 3, 4]);
});

test('decimal funds do not drift: 0.10 + 0.20 approvals against 0.30', () => {
  const h = reach.Enabled();
  h.feed(pay({ type: 'session.begin', txId: 'T9', funds: 0.3 }), line('c,STATUS,IDLE,0.30'));
  h.feed(line('c,STATUS,VEND,0.10,1'), line('c,VEND,SUCCESS'));
  const out = h.feed(line('c,STATUS,VEND,0.20,2'));
  assert.deepEqual(sent(out), ['C,VEND,0.20']);
});

test('session complete (ENABLED) ends the session with its totals', () => {
  const h = reach.SessionIdle();
  h.feed(line('c,STATUS,VEND,1.20,1'), line('c,VEND,SUCCESS'));
  const out = h.feed(line('c,STATUS,ENABLED'));
  assert.deepEqual(posted(out), [
    { type: 'session.ended', txId: 'T1', reason: 'complete', vendsSucceeded: 1, amountVended: 1.2 },
  ]);
  assert.equal(h.state, 'Enabled');
});

test('a consumer cancel of a vend makes the following session end consumer-cancel', () => {
  const h = reach.VendStatic();
  const cancelled = h.feed(line('c,ERR,VEND 1'));
  assert.equal(posted(cancelled)[0]?.type, 'vend.result');
  assert.equal((posted(cancelled)[0] as { outcome: string }).outcome, 'cancelled');
  const out = h.feed(line('c,STATUS,ENABLED'));
  assert.deepEqual(posted(out), [
    { type: 'session.ended', txId: 'T1', reason: 'consumer-cancel', vendsSucceeded: 0, amountVended: 0 },
  ]);
});

test('idle timeout: C,STOP, then session.ended idle-timeout when the board confirms', () => {
  const h = reach.SessionIdle();
  const out = h.feed(timeout('session-idle'));
  assert.deepEqual(sent(out), ['C,STOP']);
  assert.equal(h.state, 'Stopping');
  const end = h.feed(line('c,STATUS,ENABLED'));
  assert.equal((posted(end)[0] as { reason: string }).reason, 'idle-timeout');
});

test('no vend result in time: vend.result timeout (not charged) and the session is stopped', () => {
  const h = reach.VendStatic();
  const out = h.feed(timeout('vend-result'));
  assert.deepEqual(posted(out), [
    {
      type: 'vend.result',
      txId: 'T1',
      requestId: null,
      vendSeq: 1,
      outcome: 'timeout',
      detail: 'no vend result from the VMC in time',
    },
  ]);
  assert.deepEqual(sent(out), ['C,STOP']);
  const late = h.feed(line('c,VEND,SUCCESS'));
  assert.equal(refusals(late).length, 1, 'a result after the timeout is refused, not booked');
  assert.deepEqual(postedTypes(late), []);
});

test('the board has no session to stop (c,ERR,STOP): the session is over anyway', () => {
  const h = reach.Stopping();
  const out = h.feed(line('c,ERR,STOP -1'));
  assert.deepEqual(postedTypes(out), ['session.ended']);
  assert.equal(h.state, 'Enabled');
});

test('no answer to C,STOP in time: the session is reported ended', () => {
  const h = reach.Stopping();
  const out = h.feed(timeout('board-answer'));
  assert.deepEqual(posted(out), [
    { type: 'session.ended', txId: 'T1', reason: 'reader-cancel', vendsSucceeded: 0, amountVended: 0 },
  ]);
});

test('session.cancel: idle -> C,STOP; during a vend -> after its result; while starting -> right after IDLE', () => {
  const idle = reach.SessionIdle();
  assert.deepEqual(sent(idle.feed(pay({ type: 'session.cancel', txId: 'T1', reason: 'x' }))), ['C,STOP']);

  const vend = reach.VendStatic();
  assert.deepEqual(
    sent(vend.feed(pay({ type: 'session.cancel', txId: 'T1', reason: 'x' }))),
    [],
    'never interrupts a dispense',
  );
  const after = vend.feed(line('c,VEND,SUCCESS'));
  assert.deepEqual(sent(after), ['C,STOP']);
  assert.equal(vend.state, 'Stopping');

  const starting = reach.Starting();
  starting.feed(pay({ type: 'session.cancel', txId: 'T1', reason: 'x' }));
  const opened = starting.feed(line('c,STATUS,IDLE,5.00'));
  assert.deepEqual(postedTypes(opened), ['session.started']);
  assert.deepEqual(sent(opened), ['C,STOP']);
});

test('session.cancel for another txId is refused and changes nothing', () => {
  const h = reach.SessionIdle();
  const out = h.feed(pay({ type: 'session.cancel', txId: 'OTHER', reason: 'x' }));
  assert.deepEqual(sent(out), []);
  assert.equal(refusals(out).length, 1);
  assert.equal(h.state, 'SessionIdle');
});

test('the VMC disabling the reader during a session ends it (disabled)', () => {
  const h = reach.SessionIdle();
  const out = h.feed(line('c,STATUS,DISABLED'));
  assert.equal((posted(out)[0] as { reason: string }).reason, 'disabled');
  assert.equal(h.state, 'Disabled');
  const v = reach.VendStatic();
  const vo = v.feed(line('c,STATUS,DISABLED'));
  assert.deepEqual(postedTypes(vo), ['vend.result', 'session.ended']);
  assert.equal((posted(vo)[0] as { outcome: string }).outcome, 'failed');
});

test('the VMC ending the session while a vend awaits its result: vend failed (not charged), session complete', () => {
  const h = reach.VendStatic();
  const out = h.feed(line('c,STATUS,ENABLED'));
  assert.deepEqual(postedTypes(out), ['vend.result', 'session.ended']);
  assert.equal((posted(out)[0] as { outcome: string }).outcome, 'failed');
  assert.equal((posted(out)[1] as { reason: string }).reason, 'complete');
});
