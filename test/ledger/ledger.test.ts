import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { isQrvendError } from '../../src/core/errors.js';
import { SCHEMA_VERSION } from '../../src/ledger/index.js';
import {
  cancelBody,
  ManualClock,
  openStaticSession,
  openTest,
  settlementBody,
  tempLedgerPath,
  voidBody,
} from './helpers.js';

test('every open sets WAL and synchronous=FULL, also on a fresh connection to an existing file', () => {
  const tmp = tempLedgerPath();
  try {
    const clock = new ManualClock();
    openTest(tmp.path, clock).close();
    // A plain connection to the same WAL file comes up at NORMAL (1): what the ledger must not rely on.
    const plain = new Database(tmp.path);
    assert.equal(plain.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(plain.pragma('synchronous', { simple: true }), 1, 'this SQLite build opens WAL files at NORMAL');
    plain.close();
    const ledger = openTest(tmp.path, clock);
    // Reach into the connection through a read: the ledger's own connection must report FULL (2).
    const conn = (ledger as unknown as { conn: { statement(sql: string): Database.Statement } }).conn;
    assert.equal((conn.statement('PRAGMA synchronous').get() as { synchronous: number }).synchronous, 2);
    assert.equal((conn.statement('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode, 'wal');
    assert.equal(
      (conn.statement('PRAGMA user_version').get() as { user_version: number }).user_version,
      SCHEMA_VERSION,
    );
    ledger.close();
  } finally {
    tmp.cleanup();
  }
});

test('a TransactionId is unique: a second insert returns the existing record and says so', () => {
  const tmp = tempLedgerPath();
  const ledger = openTest(tmp.path, new ManualClock());
  try {
    const first = ledger.acceptStart({ txId: 'TX-UNIQUE-1', appUserId: 'user-a', balance: 12.5 });
    assert.equal(first.created, true);
    const second = ledger.acceptStart({ txId: 'TX-UNIQUE-1', appUserId: 'user-b', balance: null });
    assert.equal(second.created, false);
    assert.deepEqual(second.record.startData, { appUserId: 'user-a', balance: 12.5 });
    // Unique across flows too.
    const dyn = ledger.requestQr({ txId: 'TX-UNIQUE-1', amount: 1, item: 3, requestId: 'r1' });
    assert.equal(dyn.created, false);
    assert.equal(dyn.record.flow, 'static');
    assert.equal(ledger.eventsOf('TX-UNIQUE-1').filter((e) => e.kind === 'created').length, 1);
  } finally {
    ledger.close();
    tmp.cleanup();
  }
});

test('static QR happy path: states, vend lines, Settlement in the outbox with the exact body', () => {
  const tmp = tempLedgerPath();
  const ledger = openTest(tmp.path, new ManualClock());
  try {
    const tx = 'TX-STATIC-OK';
    assert.equal(ledger.acceptStart({ txId: tx, appUserId: 'u', balance: null }).record.state, 'start_accepted');
    assert.equal(ledger.markAuthorizing(tx, 5).record.state, 'authorizing');
    const paymentInfo = '{"AuthCode":"X9","AuthAmount":5.0,"RRN":"123"}';
    const authorized = ledger.markAuthorized(tx, paymentInfo, 5);
    assert.equal(authorized.record.state, 'authorized');
    assert.equal(authorized.record.paymentInfoText, paymentInfo, 'PaymentInfo is kept as the exact text');
    assert.equal(authorized.record.authAmount, 5);
    assert.equal(ledger.openSession(tx).record.state, 'session_open');
    ledger.recordVendApproved(tx, { seq: 1, item: 12, price: 1.1 });
    ledger.recordVendApproved(tx, { seq: 2, item: 13, price: 2.2 });
    ledger.recordVendApproved(tx, { seq: 3, item: 14, price: 0.7 });
    ledger.recordVendResult(tx, 1, 'success');
    ledger.recordVendResult(tx, 2, 'failed', 'dispense failed');
    ledger.recordVendResult(tx, 3, 'success');
    const vends = ledger.vendsOf(tx);
    assert.deepEqual(
      vends.map((v) => [v.seq, v.state, v.price]),
      [
        [1, 'success', 1.1],
        [2, 'failed', 2.2],
        [3, 'success', 0.7],
      ],
    );
    // 1.1 + 0.7 in doubles is 1.8000000000000003; the ledger sums minor units, so 1.8 is exact.
    const body = settlementBody(tx, 1.8, 2);
    const settled = ledger.settleSession(tx, body);
    assert.equal(settled.record.state, 'settling');
    assert.ok(settled.outboxId !== null);
    const row = ledger.outbox.get(settled.outboxId!);
    assert.equal(row?.body, body);
    assert.equal(row?.op, 'Settlement');
    assert.equal(row?.status, 'pending');
    const kinds = ledger.eventsOf(tx).map((e) => e.kind);
    assert.deepEqual(kinds, [
      'created',
      'markAuthorizing',
      'markAuthorized',
      'openSession',
      'vend.approved',
      'vend.approved',
      'vend.approved',
      'vend.success',
      'vend.failed',
      'vend.success',
      'settleSession',
    ]);
  } finally {
    ledger.close();
    tmp.cleanup();
  }
});

test('a Settlement whose amount or Products count does not match the vends is refused and nothing is written', () => {
  const tmp = tempLedgerPath();
  const ledger = openTest(tmp.path, new ManualClock());
  try {
    const tx = 'TX-STATIC-BADBODY';
    openStaticSession(ledger, tx);
    ledger.recordVendApproved(tx, { seq: 1, item: 1, price: 1.5 });
    ledger.recordVendResult(tx, 1, 'success');
    assert.throws(() => ledger.settleSession(tx, settlementBody(tx, 2.5, 1)), /not the sum/);
    assert.throws(() => ledger.settleSession(tx, settlementBody(tx, 1.5, 2)), /one entry per successful vend/);
    assert.throws(() => ledger.settleSession(tx, settlementBody('OTHER-TX', 1.5, 1)), /TransactionId/);
    assert.equal(ledger.getTransaction(tx)?.state, 'session_open');
    assert.equal(ledger.outbox.counts().pending, 0, 'a refused transition leaves no outbox row behind');
    assert.equal(ledger.settleSession(tx, settlementBody(tx, 1.5, 1)).changed, true);
  } finally {
    ledger.close();
    tmp.cleanup();
  }
});

test('session end: Cancel when nothing sold, refused while a vend has no outcome, refused to cancel a sale', () => {
  const tmp = tempLedgerPath();
  const ledger = openTest(tmp.path, new ManualClock());
  try {
    const tx = 'TX-STATIC-CANCEL';
    openStaticSession(ledger, tx);
    ledger.recordVendApproved(tx, { seq: 1, item: 1, price: 1 });
    assert.throws(
      () => ledger.cancelSession(tx, 2, cancelBody(tx, {}, 2)),
      (e) => isQrvendError(e, 'LEDGER_INVALID_TRANSITION') && /no reported outcome/.test(e.message),
    );
    ledger.recordVendResult(tx, 1, 'cancelled');
    const result = ledger.cancelSession(tx, 2, cancelBody(tx, {}, 2));
    assert.equal(result.record.state, 'cancelling');
    assert.equal(ledger.outbox.get(result.outboxId!)?.op, 'Cancel');

    const sold = 'TX-STATIC-SOLD';
    openStaticSession(ledger, sold);
    ledger.recordVendApproved(sold, { seq: 1, item: 1, price: 1 });
    ledger.recordVendResult(sold, 1, 'success');
    assert.throws(() => ledger.cancelSession(sold, 2, cancelBody(sold, {}, 2)), /settle it instead/);
    assert.throws(
      () => ledger.settleSession('TX-NEVER-SEEN', settlementBody('TX-NEVER-SEEN', 1, 1)),
      /not in the ledger/,
    );
  } finally {
    ledger.close();
    tmp.cleanup();
  }
});

test('declined authorization closes with nothing owed; auth timeout enqueues a Cancel', () => {
  const tmp = tempLedgerPath();
  const ledger = openTest(tmp.path, new ManualClock());
  try {
    ledger.acceptStart({ txId: 'TX-DECL', appUserId: 'u', balance: null });
    ledger.markAuthorizing('TX-DECL', 5);
    const declined = ledger.markDeclined('TX-DECL', 1, 'insufficient funds');
    assert.equal(declined.record.state, 'declined');
    assert.equal(declined.record.declineCode, 1);
    assert.equal(declined.outboxId, null);

    ledger.acceptStart({ txId: 'TX-AUTH-TIMEOUT', appUserId: 'u', balance: null });
    ledger.markAuthorizing('TX-AUTH-TIMEOUT', 5);
    const body = cancelBody('TX-AUTH-TIMEOUT', { IsGatewayTimeout: true }, 0);
    const cancelled = ledger.cancelAfterAuthTimeout('TX-AUTH-TIMEOUT', body);
    assert.equal(cancelled.record.state, 'cancelling');
    assert.equal(ledger.outbox.get(cancelled.outboxId!)?.body, body);
    assert.equal(ledger.outbox.counts().pending, 1);
  } finally {
    ledger.close();
    tmp.cleanup();
  }
});

test('transitions are idempotent on repeat and refused from a wrong state', () => {
  const tmp = tempLedgerPath();
  const ledger = openTest(tmp.path, new ManualClock());
  try {
    const tx = 'TX-REPEAT';
    openStaticSession(ledger, tx);
    const again = ledger.openSession(tx);
    assert.equal(again.changed, false);
    assert.equal(again.record.state, 'session_open');
    assert.throws(
      () => ledger.markAuthorizing(tx, 5),
      (e) => isQrvendError(e, 'LEDGER_INVALID_TRANSITION'),
    );
    ledger.recordVendApproved(tx, { seq: 1, item: 4, price: 1 });
    ledger.recordVendResult(tx, 1, 'success');
    const body = settlementBody(tx, 1, 1);
    const first = ledger.settleSession(tx, body);
    const repeat = ledger.settleSession(tx, body);
    assert.equal(first.changed, true);
    assert.equal(repeat.changed, false);
    assert.equal(ledger.outbox.counts().pending, 1, 'a repeated settle does not enqueue twice');
    // Repeating a vend record with the same data is fine; with other data it is refused.
    assert.throws(() => ledger.recordVendResult(tx, 1, 'failed'), /already ended as success/);
    assert.throws(() => ledger.recordVendApproved(tx, { seq: 1, item: 4, price: 2 }), /another item or price/);
    assert.equal(ledger.recordVendApproved(tx, { seq: 1, item: 4, price: 1 }).state, 'success');
  } finally {
    ledger.close();
    tmp.cleanup();
  }
});

test('dynamic QR: paid and vended closes the sale; paths to Void and unpaid closes', () => {
  const tmp = tempLedgerPath();
  const ledger = openTest(tmp.path, new ManualClock());
  try {
    const created = ledger.requestQr({ txId: 'TX-DYN-OK', amount: 1.5, item: 7, requestId: 'req-1' });
    assert.equal(created.record.state, 'qr_requested');
    assert.equal(created.record.amount, 1.5);
    assert.equal(ledger.recordQrIssued('TX-DYN-OK', { SrvTranId: 'S1', RRN: 'R1' }).record.state, 'qr_issued');
    const paid = ledger.recordPaid('TX-DYN-OK', '{"SrvTranId":"S1","RRN":"R1","AuthAmount":1.5,"AuthCode":"OK"}');
    assert.equal(paid.record.state, 'paid');
    assert.equal(ledger.approveVend('TX-DYN-OK').record.state, 'vend_approved');
    const vended = ledger.recordVended('TX-DYN-OK');
    assert.equal(vended.record.state, 'vended');
    assert.equal(vended.outboxId, null);

    ledger.requestQr({ txId: 'TX-DYN-VOID', amount: 2, item: 8, requestId: 'req-2' });
    ledger.recordQrIssued('TX-DYN-VOID', '{"SrvTranId":"S2","RRN":"R2"}');
    ledger.recordPaid('TX-DYN-VOID', { SrvTranId: 'S2', RRN: 'R2', AuthAmount: 2 });
    ledger.approveVend('TX-DYN-VOID');
    const voided = ledger.voidPayment('TX-DYN-VOID', 3, voidBody('TX-DYN-VOID', { SrvTranId: 'S2' }, 3));
    assert.equal(voided.record.state, 'voiding');
    assert.equal(ledger.outbox.get(voided.outboxId!)?.op, 'Void');

    ledger.requestQr({ txId: 'TX-DYN-DECL', amount: 2, item: 8, requestId: null });
    ledger.recordQrIssued('TX-DYN-DECL', {});
    assert.equal(ledger.closeUnpaid('TX-DYN-DECL', 'declined', 1, 'insufficient funds').record.state, 'declined');
    ledger.requestQr({ txId: 'TX-DYN-EXP', amount: 2, item: 8, requestId: null });
    ledger.recordQrIssued('TX-DYN-EXP', {});
    assert.equal(ledger.closeUnpaid('TX-DYN-EXP', 'expired', 993, 'not paid in time').record.state, 'expired');
    ledger.requestQr({ txId: 'TX-DYN-NI', amount: 2, item: 8, requestId: null });
    assert.equal(
      ledger.closeUnpaid('TX-DYN-NI', 'not_issued', null, 'GenerateQR unanswered').record.state,
      'not_issued',
    );
    // A static step on a dynamic transaction is refused.
    assert.throws(() => ledger.openSession('TX-DYN-NI'), /does not apply to a dynamic/);
    assert.throws(
      () => ledger.closeUnpaid('TX-DYN-OK', 'expired', null, 'x'),
      (e) => isQrvendError(e, 'LEDGER_INVALID_TRANSITION'),
    );
  } finally {
    ledger.close();
    tmp.cleanup();
  }
});

test('amounts that do not fit the decimal places are refused, sums stay exact', () => {
  const tmp = tempLedgerPath();
  const ledger = openTest(tmp.path, new ManualClock());
  try {
    assert.throws(
      () => ledger.requestQr({ txId: 'TX-AMT', amount: 1.005, item: 1, requestId: null }),
      /at most 2 decimal places/,
    );
    assert.equal(ledger.getTransaction('TX-AMT'), null);
    openStaticSession(ledger, 'TX-SUM');
    for (let seq = 1; seq <= 10; seq++) {
      ledger.recordVendApproved('TX-SUM', { seq, item: seq, price: 0.1 });
      ledger.recordVendResult('TX-SUM', seq, 'success');
    }
    // Ten times 0.1 is 0.9999999999999999 in doubles; in minor units it is exactly 100.
    assert.equal(ledger.settleSession('TX-SUM', settlementBody('TX-SUM', 1, 10)).record.state, 'settling');
  } finally {
    ledger.close();
    tmp.cleanup();
  }
});

test('the event log is append-only and survives a reopen with every row committed', () => {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  try {
    const ledger = openTest(tmp.path, clock);
    openStaticSession(ledger, 'TX-LOG');
    ledger.close();
    const raw = new Database(tmp.path);
    assert.throws(() => raw.prepare(`UPDATE events SET kind = 'forged'`).run(), /append-only/);
    raw.close();
    const reopened = openTest(tmp.path, clock);
    assert.equal(reopened.getTransaction('TX-LOG')?.state, 'session_open');
    assert.equal(reopened.eventsOf('TX-LOG').length, 4);
    reopened.close();
  } finally {
    tmp.cleanup();
  }
});

test('the SecretToken has nowhere to go: Start keeps only AppUserId and Balance', () => {
  const tmp = tempLedgerPath();
  const ledger = openTest(tmp.path, new ManualClock());
  try {
    const startLike = { txId: 'TX-SECRET', appUserId: 'u', balance: null, SecretToken: 'S'.repeat(64) };
    ledger.acceptStart(startLike);
    ledger.close();
    const raw = new Database(tmp.path, { readonly: true });
    const dump =
      JSON.stringify(raw.prepare('SELECT * FROM transactions').all()) +
      JSON.stringify(raw.prepare('SELECT * FROM events').all());
    raw.close();
    assert.ok(!dump.includes('SSSSSSSS'), 'no secret in the ledger');
  } finally {
    tmp.cleanup();
  }
});
