import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recoverLedger, recoveryActionFor, type Ledger, type TxState } from '../../src/ledger/index.js';
import {
  cancelBody,
  ManualClock,
  openStaticSession,
  openTest,
  recordingBodies,
  settlementBody,
  tempLedgerPath,
  voidBody,
} from './helpers.js';

/** Leaves one transaction in every state a crash can catch, then restarts and recovers. */
function seedEveryState(ledger: Ledger): void {
  // Static QR
  ledger.acceptStart({ txId: 'S-start-accepted', appUserId: 'u', balance: null });
  ledger.acceptStart({ txId: 'S-authorizing', appUserId: 'u', balance: null });
  ledger.markAuthorizing('S-authorizing', 5);
  ledger.acceptStart({ txId: 'S-authorized', appUserId: 'u', balance: null });
  ledger.markAuthorizing('S-authorized', 5);
  ledger.markAuthorized('S-authorized', '{"AuthCode":"A","AuthAmount":5}', 5);
  openStaticSession(ledger, 'S-session-empty');
  openStaticSession(ledger, 'S-session-sold');
  ledger.recordVendApproved('S-session-sold', { seq: 1, item: 10, price: 1.25 });
  ledger.recordVendResult('S-session-sold', 1, 'success');
  ledger.recordVendApproved('S-session-sold', { seq: 2, item: 11, price: 2 });
  ledger.recordVendResult('S-session-sold', 2, 'failed');
  ledger.recordVendApproved('S-session-sold', { seq: 3, item: 12, price: 0.5 }); // outcome never reported
  openStaticSession(ledger, 'S-session-unreported');
  ledger.recordVendApproved('S-session-unreported', { seq: 1, item: 10, price: 1 }); // outcome never reported
  openStaticSession(ledger, 'S-settling');
  ledger.recordVendApproved('S-settling', { seq: 1, item: 1, price: 1 });
  ledger.recordVendResult('S-settling', 1, 'success');
  ledger.settleSession('S-settling', settlementBody('S-settling', 1, 1));
  ledger.acceptStart({ txId: 'S-declined', appUserId: 'u', balance: null });
  ledger.markAuthorizing('S-declined', 5);
  ledger.markDeclined('S-declined', 1, 'insufficient funds');
  openStaticSession(ledger, 'S-cancelling');
  ledger.cancelSession('S-cancelling', 2, cancelBody('S-cancelling', {}, 2));
  // Dynamic QR
  ledger.requestQr({ txId: 'D-qr-requested', amount: 1, item: 1, requestId: null });
  ledger.requestQr({ txId: 'D-qr-issued', amount: 1, item: 1, requestId: null });
  ledger.recordQrIssued('D-qr-issued', { SrvTranId: 'S', RRN: 'R' });
  ledger.requestQr({ txId: 'D-paid', amount: 1, item: 1, requestId: null });
  ledger.recordQrIssued('D-paid', { SrvTranId: 'S', RRN: 'R' });
  ledger.recordPaid('D-paid', { SrvTranId: 'S', RRN: 'R', AuthAmount: 1, AuthCode: 'OK' });
  ledger.requestQr({ txId: 'D-vend-approved', amount: 1, item: 1, requestId: null });
  ledger.recordQrIssued('D-vend-approved', { SrvTranId: 'S', RRN: 'R' });
  ledger.recordPaid('D-vend-approved', { SrvTranId: 'S', RRN: 'R', AuthAmount: 1, AuthCode: 'OK' });
  ledger.approveVend('D-vend-approved');
  ledger.requestQr({ txId: 'D-vended', amount: 1, item: 1, requestId: null });
  ledger.recordQrIssued('D-vended', {});
  ledger.recordPaid('D-vended', {});
  ledger.approveVend('D-vended');
  ledger.recordVended('D-vended');
  ledger.requestQr({ txId: 'D-voiding', amount: 1, item: 1, requestId: null });
  ledger.recordQrIssued('D-voiding', {});
  ledger.voidPayment('D-voiding', 3, voidBody('D-voiding', { IsGatewayTimeout: true }, 3));
}

test('recovery at start resolves every state a crash can leave, and only those', () => {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  try {
    const before = openTest(tmp.path, clock);
    seedEveryState(before);
    const pendingBefore = before.outbox.counts().pending;
    before.close(); // the "crash": nothing else is done before the restart

    const ledger = openTest(tmp.path, clock);
    const bodies = recordingBodies();
    const report = recoverLedger(ledger, bodies);
    assert.deepEqual(report.failed, []);
    const outcome = Object.fromEntries(report.recovered.map((r) => [r.txId, r.to]));
    assert.deepEqual(outcome, {
      'S-start-accepted': 'cancelling',
      'S-authorizing': 'cancelling',
      'S-authorized': 'cancelling',
      'S-session-empty': 'cancelling',
      'S-session-sold': 'settling',
      'S-session-unreported': 'cancelling',
      'D-qr-requested': 'not_issued',
      'D-qr-issued': 'voiding',
      'D-paid': 'voiding',
      'D-vend-approved': 'voiding',
    });
    assert.deepEqual(bodies.calls.sort(), [
      'cancel S-authorized 3',
      'cancel S-session-empty 3',
      'cancel S-session-unreported 3',
      'cancelAfterTimeout S-authorizing',
      'cancelAfterTimeout S-start-accepted',
      'settlement S-session-sold 1',
      'void D-paid 3',
      'void D-qr-issued 3',
      'void D-vend-approved 3',
    ]);
    // The settlement charges only the vend reported successful; the unreported one became timeout.
    const sold = ledger.vendsOf('S-session-sold');
    assert.deepEqual(
      sold.map((v) => v.state),
      ['success', 'failed', 'timeout'],
    );
    const settlementRow = ledger.outbox.list({ limit: 100 }).find((r) => r.txId === 'S-session-sold');
    assert.equal(JSON.parse(settlementRow!.body).BasicInfo.Amount, 1.25);
    assert.equal(ledger.vendsOf('S-session-unreported')[0]?.state, 'timeout');
    // Transactions already closed or waiting on the outbox are untouched.
    for (const [txId, state] of [
      ['S-settling', 'settling'],
      ['S-declined', 'declined'],
      ['S-cancelling', 'cancelling'],
      ['D-vended', 'vended'],
      ['D-voiding', 'voiding'],
    ] as const) {
      assert.equal(ledger.getTransaction(txId)?.state, state, txId);
    }
    // One new outbox row per transaction that owed the gateway something (9), none for the QR never shown.
    assert.equal(ledger.outbox.counts().pending, pendingBefore + 9);
    // A second recovery finds nothing left.
    assert.deepEqual(recoverLedger(ledger, recordingBodies()).recovered, []);
    ledger.close();
  } finally {
    tmp.cleanup();
  }
});

test('recovery leaves a transaction as it was when its body cannot be built, and retries next start', () => {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  try {
    const ledger = openTest(tmp.path, clock);
    ledger.acceptStart({ txId: 'S-broken', appUserId: 'u', balance: null });
    const failing = {
      ...recordingBodies(),
      cancelAfterTimeout: () => {
        throw new Error('builder failed');
      },
    };
    const report = recoverLedger(ledger, failing);
    assert.equal(report.failed.length, 1);
    assert.equal(ledger.getTransaction('S-broken')?.state, 'start_accepted');
    assert.equal(recoverLedger(ledger, recordingBodies()).recovered[0]?.to, 'cancelling');
    ledger.close();
  } finally {
    tmp.cleanup();
  }
});

test('every state has a recovery action, and only open states owe one', () => {
  const owed: Record<string, string> = {};
  const all: TxState[] = [
    'start_accepted',
    'authorizing',
    'authorized',
    'session_open',
    'settling',
    'cancelling',
    'settled',
    'cancelled',
    'declined',
    'dead',
    'qr_requested',
    'qr_issued',
    'paid',
    'vend_approved',
    'vended',
    'voiding',
    'voided',
    'expired',
    'not_issued',
  ];
  for (const state of all) owed[state] = recoveryActionFor(state);
  assert.deepEqual(owed, {
    start_accepted: 'cancel-timeout',
    authorizing: 'cancel-timeout',
    authorized: 'close-session',
    session_open: 'close-session',
    settling: 'none',
    cancelling: 'none',
    settled: 'none',
    cancelled: 'none',
    declined: 'none',
    dead: 'none',
    qr_requested: 'not-issued',
    qr_issued: 'void',
    paid: 'void',
    vend_approved: 'void',
    vended: 'none',
    voiding: 'none',
    voided: 'none',
    expired: 'none',
    not_issued: 'none',
  });
});

test('recovery charges a vend recorded as reset after its approval (MDB 4.2 7.4.7), not one never reported', () => {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  try {
    const before = openTest(tmp.path, clock);
    openStaticSession(before, 'S-reset-sold');
    before.recordVendApproved('S-reset-sold', { seq: 1, item: 7, price: 0.29 });
    before.recordVendResult('S-reset-sold', 1, 'success');
    before.recordVendApproved('S-reset-sold', { seq: 2, item: 12, price: 1.15 });
    before.recordVendResult('S-reset-sold', 2, 'reset', 'c,ERR,VEND 5');
    before.recordVendApproved('S-reset-sold', { seq: 3, item: 13, price: 4.35 }); // outcome never reported
    openStaticSession(before, 'S-reset-only');
    before.recordVendApproved('S-reset-only', { seq: 1, item: 12, price: 1.15 });
    before.recordVendResult('S-reset-only', 1, 'reset', 'the VMC reset the reader');
    before.close();

    const ledger = openTest(tmp.path, clock);
    const bodies = recordingBodies();
    const report = recoverLedger(ledger, bodies);
    assert.deepEqual(Object.fromEntries(report.recovered.map((r) => [r.txId, r.to])), {
      'S-reset-sold': 'settling',
      'S-reset-only': 'settling',
    });
    assert.deepEqual(bodies.calls.sort(), ['settlement S-reset-only 1', 'settlement S-reset-sold 1,2']);
    assert.deepEqual(
      ledger.vendsOf('S-reset-sold').map((v) => v.state),
      ['success', 'reset', 'timeout'],
    );
    const rows = ledger.outbox.list({ limit: 10 });
    assert.equal(JSON.parse(rows.find((r) => r.txId === 'S-reset-sold')!.body).BasicInfo.Amount, 1.44);
    assert.equal(JSON.parse(rows.find((r) => r.txId === 'S-reset-only')!.body).BasicInfo.Amount, 1.15);
    ledger.close();
  } finally {
    tmp.cleanup();
  }
});
