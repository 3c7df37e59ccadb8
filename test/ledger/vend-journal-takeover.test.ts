/**
 * The payment worker's take-over of the vend journal (src/ledger/vend-journal-takeover.ts) on a
 * real ledger file: what a crash left in the journal is recorded before recovery, exactly once,
 * however often it is replayed, and never forced into a transaction already closed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { recoverLedger, type Ledger } from '../../src/ledger/index.js';
import { encodeRecord, type VendJournalRecord } from '../../src/ledger/vend-journal.js';
import { VendJournalTakeover } from '../../src/ledger/vend-journal-takeover.js';
import { silentLogger } from '../../src/core/log.js';
import { ManualClock, openStaticSession, openTest, recordingBodies, tempLedgerPath, voidBody } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const EARLIER = 'e0e0e0e0';

const sold = (tx: string, seq: number, price: number): VendJournalRecord => ({
  run: EARLIER,
  n: seq,
  at: 1,
  flow: 'static',
  tx,
  seq,
  item: 10 + seq,
  price,
  outcome: 'success',
});
const vended = (tx: string): VendJournalRecord => ({
  run: EARLIER,
  n: 0,
  at: 1,
  flow: 'dynamic',
  tx,
  req: 'vr-1',
  outcome: 'success',
});

function journalOf(path: string, records: VendJournalRecord[]): string {
  const file = `${path}.vend-journal`;
  writeFileSync(file, Buffer.concat(records.map((r) => encodeRecord(r)!)));
  return file;
}

function paidDynamic(ledger: Ledger, txId: string, approved: boolean): void {
  ledger.requestQr({ txId, amount: 1, item: 1, requestId: 'vr-1' });
  ledger.recordQrIssued(txId, { SrvTranId: 'S', RRN: 'R' });
  ledger.recordPaid(txId, { SrvTranId: 'S', RRN: 'R', AuthAmount: 1, AuthCode: 'OK' });
  if (approved) ledger.approveVend(txId);
}

function withTmpLedger(fn: (ledger: Ledger, path: string) => void): void {
  const tmp = tempLedgerPath();
  const ledger = openTest(tmp.path, new ManualClock());
  try {
    fn(ledger, tmp.path);
  } finally {
    ledger.close();
    tmp.cleanup();
  }
}

test('static: a vend the crash kept only in the journal is recorded, and recovery settles it', T, () => {
  withTmpLedger((ledger, path) => {
    openStaticSession(ledger, 'TX-OPEN'); // the session's opening and the vend were never committed...
    ledger.acceptStart({ txId: 'TX-AUTH', appUserId: 'u', balance: null });
    ledger.markAuthorizing('TX-AUTH', 5);
    ledger.markAuthorized('TX-AUTH', '{"AuthCode":"A","AuthAmount":5}', 5); // ...or only authorized
    const file = journalOf(path, [sold('TX-OPEN', 1, 1.5), sold('TX-OPEN', 2, 2), sold('TX-AUTH', 1, 0.4)]);
    const takeover = new VendJournalTakeover(ledger, { path: file, run: 'f0f0f0f0', log: silentLogger() });
    const report = takeover.takeOver();
    assert.equal(report.replayed, 3);
    assert.equal(takeover.done, true);
    const bodies = recordingBodies();
    recoverLedger(ledger, bodies);
    assert.deepEqual(bodies.calls.sort(), ['settlement TX-AUTH 1', 'settlement TX-OPEN 1,2']);
    const vends = ledger.vendsOf('TX-OPEN').map((v) => [v.seq, v.state, v.price]);
    assert.deepEqual(vends, [
      [1, 'success', 1.5],
      [2, 'success', 2],
    ]);
  });
});

test('replayed twice, or holding the same record twice: one vend, one Settlement, nothing charged twice', T, () => {
  withTmpLedger((ledger, path) => {
    openStaticSession(ledger, 'TX-1');
    const file = journalOf(path, [sold('TX-1', 1, 1.5), sold('TX-1', 1, 1.5)]);
    const log = silentLogger();
    const first = new VendJournalTakeover(ledger, { path: file, run: 'f0f0f0f0', log }).takeOver();
    assert.deepEqual([first.replayed, first.alreadyRecorded], [1, 0], 'one vend, however often it is written');
    // A crash during recovery: the next start reads the same journal again.
    const second = new VendJournalTakeover(ledger, { path: file, run: 'f1f1f1f1', log }).takeOver();
    assert.deepEqual([second.replayed, second.alreadyRecorded], [0, 1]);
    const events = ledger.eventsOf('TX-1').filter((e) => e.kind === 'vend.success');
    assert.equal(events.length, 1);
    const bodies = recordingBodies();
    recoverLedger(ledger, bodies);
    recoverLedger(ledger, bodies);
    assert.deepEqual(bodies.calls, ['settlement TX-1 1']);
    assert.equal(ledger.outbox.counts().pending, 1);
  });
});

test('a record the ledger already holds, a closed session and an unknown transaction change nothing', T, () => {
  withTmpLedger((ledger, path) => {
    openStaticSession(ledger, 'TX-DONE');
    ledger.recordVendApproved('TX-DONE', { seq: 1, item: 11, price: 1.5 });
    ledger.recordVendResult('TX-DONE', 1, 'success');
    openStaticSession(ledger, 'TX-FAILED');
    ledger.recordVendApproved('TX-FAILED', { seq: 1, item: 11, price: 1.5 });
    ledger.recordVendResult('TX-FAILED', 1, 'failed'); // another outcome recorded: never overruled
    const file = journalOf(path, [sold('TX-DONE', 1, 1.5), sold('TX-FAILED', 1, 1.5), sold('TX-NOWHERE', 1, 1)]);
    const report = new VendJournalTakeover(ledger, { path: file, run: 'f0f0f0f0', log: silentLogger() }).takeOver();
    assert.deepEqual([report.replayed, report.alreadyRecorded, report.moot, report.failed], [0, 1, 2, 0]);
    assert.equal(ledger.vendsOf('TX-FAILED')[0]!.state, 'failed');
    assert.equal(ledger.getTransaction('TX-NOWHERE'), null);
  });
});

test('dynamic: a paid vend kept by the journal is vended, no Void; one already voided stays voided', T, () => {
  withTmpLedger((ledger, path) => {
    paidDynamic(ledger, 'D-APPROVED', true);
    paidDynamic(ledger, 'D-PAID', false);
    paidDynamic(ledger, 'D-VOIDING', true);
    ledger.voidPayment('D-VOIDING', 3, voidBody('D-VOIDING', { IsGatewayTimeout: true }, 3));
    const file = journalOf(path, [vended('D-APPROVED'), vended('D-PAID'), vended('D-VOIDING')]);
    const report = new VendJournalTakeover(ledger, { path: file, run: 'f0f0f0f0', log: silentLogger() }).takeOver();
    assert.deepEqual([report.replayed, report.moot], [2, 1]);
    const bodies = recordingBodies();
    recoverLedger(ledger, bodies);
    assert.deepEqual(bodies.calls, [], 'no Void for a dispensed vend');
    assert.equal(ledger.getTransaction('D-APPROVED')!.state, 'vended');
    assert.equal(ledger.getTransaction('D-PAID')!.state, 'vended');
    assert.equal(ledger.getTransaction('D-VOIDING')!.state, 'voiding');
  });
});

test("this run's own records are not replayed; they are acknowledged once the ledger holds them", T, () => {
  withTmpLedger((ledger, path) => {
    openStaticSession(ledger, 'TX-LIVE');
    const mine = { ...sold('TX-LIVE', 1, 1.5), run: 'f0f0f0f0' };
    const file = journalOf(path, [mine]);
    const takeover = new VendJournalTakeover(ledger, { path: file, run: 'f0f0f0f0', log: silentLogger() });
    assert.equal(takeover.takeOver().replayed, 0);
    takeover.note({
      type: 'vend.result',
      txId: 'TX-LIVE',
      requestId: null,
      vendSeq: 1,
      outcome: 'success',
      detail: null,
    });
    assert.deepEqual(takeover.settle(), [], 'not in the ledger yet: still pending');
    ledger.recordVendApproved('TX-LIVE', { seq: 1, item: 11, price: 1.5 });
    ledger.recordVendResult('TX-LIVE', 1, 'success');
    assert.deepEqual(takeover.settle(), ['TX-LIVE#1']);
    assert.deepEqual(takeover.settle(), []);
  });
});

// The approval rule (docs/decisions/sales-and-recovery.md): an approval journaled with no result
// anywhere is a reset after VEND APPROVED, a sale (MDB 4.2 7.4.7); a result journaled wins over it.
const approvedStatic = (tx: string, seq: number, price: number, run = EARLIER): VendJournalRecord => ({
  run,
  n: seq * 2,
  at: 1,
  kind: 'approval',
  flow: 'static',
  tx,
  seq,
  item: 10 + seq,
  price,
});
const resultStatic = (tx: string, seq: number, price: number, outcome: 'success' | 'failed'): VendJournalRecord => ({
  run: EARLIER,
  n: seq * 2 + 1,
  at: 1,
  kind: 'result',
  flow: 'static',
  tx,
  seq,
  item: 10 + seq,
  price,
  outcome,
});
const approvedDynamic = (tx: string): VendJournalRecord => ({
  run: EARLIER,
  n: 0,
  at: 1,
  kind: 'approval',
  flow: 'dynamic',
  tx,
  req: 'vr-1',
});
const failedDynamic = (tx: string): VendJournalRecord => ({
  run: EARLIER,
  n: 1,
  at: 1,
  kind: 'result',
  flow: 'dynamic',
  tx,
  req: 'vr-1',
  outcome: 'failed',
});

test('approval only: charged once as a reset after the approval; a second start charges nothing more', T, () => {
  withTmpLedger((ledger, path) => {
    openStaticSession(ledger, 'TX-A');
    ledger.recordVendApproved('TX-A', { seq: 1, item: 11, price: 1.5 }); // the ledger had the approval...
    openStaticSession(ledger, 'TX-B'); // ...or not even that
    const file = journalOf(path, [approvedStatic('TX-A', 1, 1.5), approvedStatic('TX-B', 1, 2)]);
    const log = silentLogger();
    const first = new VendJournalTakeover(ledger, { path: file, run: 'f0f0f0f0', log }).takeOver();
    assert.deepEqual([first.chargedByResetRule, first.replayed, first.failed], [2, 0, 0]);
    assert.deepEqual(
      ledger.vendsOf('TX-A').map((v) => [v.seq, v.state, v.price]),
      [[1, 'reset', 1.5]],
    );
    assert.deepEqual(
      ledger.vendsOf('TX-B').map((v) => [v.seq, v.state, v.price]),
      [[1, 'reset', 2]],
    );
    const second = new VendJournalTakeover(ledger, { path: file, run: 'f1f1f1f1', log }).takeOver();
    assert.deepEqual([second.chargedByResetRule, second.alreadyRecorded], [0, 2]);
    const bodies = recordingBodies();
    recoverLedger(ledger, bodies);
    recoverLedger(ledger, bodies);
    assert.deepEqual(bodies.calls.sort(), ['settlement TX-A 1', 'settlement TX-B 1']);
    assert.equal(ledger.eventsOf('TX-A').filter((e) => e.kind === 'vend.reset').length, 1);
  });
});

test('approval and its result: the result wins (a success charged once, a failure never)', T, () => {
  withTmpLedger((ledger, path) => {
    openStaticSession(ledger, 'TX-OK');
    openStaticSession(ledger, 'TX-KO');
    const file = journalOf(path, [
      approvedStatic('TX-OK', 1, 1.5),
      resultStatic('TX-OK', 1, 1.5, 'success'),
      approvedStatic('TX-KO', 1, 2),
      resultStatic('TX-KO', 1, 2, 'failed'),
    ]);
    const report = new VendJournalTakeover(ledger, { path: file, run: 'f0f0f0f0', log: silentLogger() }).takeOver();
    assert.deepEqual([report.replayed, report.chargedByResetRule, report.notSold], [1, 0, 1]);
    assert.deepEqual(
      ledger.vendsOf('TX-OK').map((v) => v.state),
      ['success'],
    );
    assert.deepEqual(ledger.vendsOf('TX-KO'), [], 'nothing written for the failure: recovery fails the vend');
    const bodies = recordingBodies();
    recoverLedger(ledger, bodies);
    assert.deepEqual(bodies.calls.sort(), ['cancel TX-KO 3', 'settlement TX-OK 1']);
  });
});

test('approval only, but the ledger already closed the vend: left alone', T, () => {
  withTmpLedger((ledger, path) => {
    openStaticSession(ledger, 'TX-FAILED');
    ledger.recordVendApproved('TX-FAILED', { seq: 1, item: 11, price: 1.5 });
    ledger.recordVendResult('TX-FAILED', 1, 'failed'); // its result reached the ledger
    openStaticSession(ledger, 'TX-CANCELLED');
    recoverLedger(ledger, recordingBodies()); // TX-CANCELLED closed (Cancel) before the journal is read
    openStaticSession(ledger, 'TX-SOLD');
    ledger.recordVendApproved('TX-SOLD', { seq: 1, item: 11, price: 1.5 });
    ledger.recordVendResult('TX-SOLD', 1, 'success');
    paidDynamic(ledger, 'D-VOIDING', true);
    ledger.voidPayment('D-VOIDING', 3, voidBody('D-VOIDING', { IsGatewayTimeout: true }, 3));
    const file = journalOf(path, [
      approvedStatic('TX-FAILED', 1, 1.5),
      approvedStatic('TX-CANCELLED', 1, 1),
      approvedStatic('TX-SOLD', 1, 1.5),
      approvedDynamic('D-VOIDING'),
    ]);
    const report = new VendJournalTakeover(ledger, { path: file, run: 'f0f0f0f0', log: silentLogger() }).takeOver();
    assert.deepEqual([report.chargedByResetRule, report.alreadyRecorded, report.moot], [0, 1, 3]);
    assert.equal(ledger.vendsOf('TX-FAILED')[0]!.state, 'failed');
    assert.deepEqual(ledger.vendsOf('TX-CANCELLED'), []);
    assert.equal(ledger.getTransaction('TX-CANCELLED')!.state, 'cancelling');
    assert.equal(ledger.getTransaction('D-VOIDING')!.state, 'voiding');
  });
});

test('result only (no approval journaled: an earlier version, or the bound was reached): as before', T, () => {
  withTmpLedger((ledger, path) => {
    openStaticSession(ledger, 'TX-1');
    const file = journalOf(path, [resultStatic('TX-1', 1, 1.5, 'success'), sold('TX-1', 2, 2)]);
    const report = new VendJournalTakeover(ledger, { path: file, run: 'f0f0f0f0', log: silentLogger() }).takeOver();
    assert.deepEqual([report.replayed, report.chargedByResetRule], [2, 0]);
    assert.deepEqual(
      ledger.vendsOf('TX-1').map((v) => v.state),
      ['success', 'success'],
    );
  });
});

test('dynamic: an approval with no result counts as sold (no Void); with a failure it is voided', T, () => {
  withTmpLedger((ledger, path) => {
    paidDynamic(ledger, 'D-SOLD', true);
    paidDynamic(ledger, 'D-PAID', false); // the kill came before the ledger recorded the approval
    paidDynamic(ledger, 'D-FAILED', true);
    const file = journalOf(path, [
      approvedDynamic('D-SOLD'),
      approvedDynamic('D-PAID'),
      approvedDynamic('D-FAILED'),
      failedDynamic('D-FAILED'),
    ]);
    const report = new VendJournalTakeover(ledger, { path: file, run: 'f0f0f0f0', log: silentLogger() }).takeOver();
    assert.deepEqual([report.chargedByResetRule, report.notSold], [2, 1]);
    const bodies = recordingBodies();
    recoverLedger(ledger, bodies);
    assert.deepEqual(bodies.calls, ['void D-FAILED 3']);
    assert.equal(ledger.getTransaction('D-SOLD')!.state, 'vended');
    assert.equal(ledger.getTransaction('D-PAID')!.state, 'vended');
  });
});

test('a vend approved in the ledger but never journaled as approved stays "never reported: failed"', T, () => {
  withTmpLedger((ledger, path) => {
    openStaticSession(ledger, 'TX-UNSENT');
    ledger.recordVendApproved('TX-UNSENT', { seq: 1, item: 11, price: 1.5 });
    const file = journalOf(path, []);
    const report = new VendJournalTakeover(ledger, { path: file, run: 'f0f0f0f0', log: silentLogger() }).takeOver();
    assert.equal(report.chargedByResetRule, 0);
    const bodies = recordingBodies();
    recoverLedger(ledger, bodies);
    assert.deepEqual(bodies.calls, ['cancel TX-UNSENT 3']);
    assert.equal(ledger.vendsOf('TX-UNSENT')[0]!.state, 'timeout');
  });
});
