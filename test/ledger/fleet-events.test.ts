/** The fleet events in the ledger: a sale with the change that closed it, alarm rows bounded, sales never dropped. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, openTest, settlementBody, tempLedgerPath, voidBody } from './helpers.js';
import { minorText } from '../../src/ledger/fleet-events.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const PI = '{"SrvTranId":"S","RRN":"R"}';

test('no event is written while the fleet link is off', T, () => {
  const tmp = tempLedgerPath();
  try {
    const clock = new ManualClock();
    const ledger = openTest(tmp.path, clock);
    assert.equal(ledger.fleetEvents.recordAlarm({ code: 'READER_OFFLINE', state: 'raised', detail: null }), null);
    assert.deepEqual(ledger.fleetEvents.pending(0, 10), []);
    ledger.close();
  } finally {
    tmp.cleanup();
  }
});

test(
  'a delivered Settlement writes one sale event in the same transaction; a repeat of the delivery writes none',
  T,
  () => {
    const tmp = tempLedgerPath();
    try {
      const clock = new ManualClock();
      const ledger = openTest(tmp.path, clock);
      ledger.fleetEvents.enable({ machineId: 'M1', currencyCode: 'EUR', maxQueuedAlarms: 10 });
      let wakeups = 0;
      ledger.fleetEvents.onWritten(() => (wakeups += 1));
      ledger.acceptStart({ txId: 'S-1aaaaaaa', appUserId: 'u', balance: null });
      ledger.markAuthorizing('S-1aaaaaaa', 5);
      ledger.markAuthorized('S-1aaaaaaa', PI, 5);
      ledger.openSession('S-1aaaaaaa');
      ledger.recordVendApproved('S-1aaaaaaa', { seq: 1, item: 12, price: 1.5 });
      ledger.recordVendResult('S-1aaaaaaa', 1, 'success');
      ledger.recordVendApproved('S-1aaaaaaa', { seq: 2, item: 7, price: 2 });
      ledger.recordVendResult('S-1aaaaaaa', 2, 'failed');
      ledger.settleSession('S-1aaaaaaa', settlementBody('S-1aaaaaaa', 1.5, 1));
      assert.deepEqual(ledger.fleetEvents.pending(0, 10), [], 'not closed yet: the Settlement waits in the outbox');
      const row = ledger.outbox.due(clock.ms, 10, [])[0]!;
      ledger.outbox.markDelivered(row, clock.ms);
      ledger.outbox.markDelivered(row, clock.ms);
      const events = ledger.fleetEvents.pending(0, 10);
      assert.equal(events.length, 1);
      assert.equal(wakeups, 1);
      const body = JSON.parse(events[0]!.body);
      assert.equal(body.eventId, events[0]!.eventId);
      assert.deepEqual(
        {
          kind: body.kind,
          txId: body.txId,
          amount: body.amount,
          currency: body.currency,
          closing: body.closing,
          verdict: body.verdict,
          products: body.products,
        },
        {
          kind: 'sale',
          txId: 'S-1aaaaaaa',
          amount: '1.50',
          currency: 'EUR',
          closing: 'settlement',
          verdict: 'accepted',
          products: [
            { item: 12, price: '1.50', outcome: 'success' },
            { item: 7, price: '2.00', outcome: 'failed' },
          ],
        },
      );
      assert.equal(ledger.fleetEvents.remove([events[0]!.seq]), 1);
      assert.deepEqual(ledger.fleetEvents.pending(0, 10), []);
      ledger.close();
    } finally {
      tmp.cleanup();
    }
  },
);

test('a dead-lettered Void is a sale event with verdict dead-letter and nothing charged', T, () => {
  const tmp = tempLedgerPath();
  try {
    const clock = new ManualClock();
    const ledger = openTest(tmp.path, clock);
    ledger.fleetEvents.enable({ machineId: 'M1', currencyCode: 'EUR', maxQueuedAlarms: 10 });
    ledger.requestQr({ txId: 'D-1aaaaaaa', amount: 2.5, item: 4, requestId: 'rq-1' });
    ledger.recordQrIssued('D-1aaaaaaa', '{"SrvTranId":"Q"}');
    ledger.recordPaid('D-1aaaaaaa', PI, 250);
    ledger.voidPayment('D-1aaaaaaa', 1, voidBody('D-1aaaaaaa', JSON.parse(PI), 1));
    const row = ledger.outbox.due(clock.ms, 10, [])[0]!;
    ledger.outbox.deadLetter(row, clock.ms, 'gave up', 500);
    const body = JSON.parse(ledger.fleetEvents.pending(0, 10)[0]!.body);
    assert.deepEqual(
      [body.flow, body.closing, body.verdict, body.amount, body.products],
      ['dynamic', 'void', 'dead-letter', '0.00', [{ item: 4, price: '2.50', outcome: 'not-vended' }]],
    );
    ledger.close();
  } finally {
    tmp.cleanup();
  }
});

test('alarm rows beyond maxQueuedAlarms drop the oldest alarms (counted); sale rows are never dropped', T, () => {
  const tmp = tempLedgerPath();
  try {
    const clock = new ManualClock();
    const ledger = openTest(tmp.path, clock);
    ledger.fleetEvents.enable({ machineId: 'M1', currencyCode: 'EUR', maxQueuedAlarms: 10 });
    ledger.requestQr({ txId: 'D-2aaaaaaa', amount: 1, item: 1, requestId: 'rq-2' });
    ledger.recordQrIssued('D-2aaaaaaa', '{"SrvTranId":"Q"}');
    ledger.recordPaid('D-2aaaaaaa', PI, 100);
    ledger.approveVend('D-2aaaaaaa');
    ledger.recordVended('D-2aaaaaaa');
    const ids: string[] = [];
    for (let i = 0; i < 25; i++)
      ids.push(
        ledger.fleetEvents.recordAlarm({
          code: 'GATEWAY_UNREACHABLE',
          state: i % 2 === 0 ? 'raised' : 'cleared',
          detail: `#${i}`,
        })!,
      );
    const counts = ledger.fleetEvents.counts();
    assert.deepEqual(counts, { sales: 1, alarms: 10, dropped: 15 });
    const left = ledger.fleetEvents.pending(0, 100);
    assert.equal(left[0]!.kind, 'sale', 'the sale, older than every alarm, is still first');
    assert.deepEqual(
      left.slice(1).map((e) => e.eventId),
      ids.slice(15),
      'the newest alarms are kept',
    );
    ledger.close();
  } finally {
    tmp.cleanup();
  }
});

test('amounts are decimal text from minor units', T, () => {
  assert.equal(minorText(150, 2), '1.50');
  assert.equal(minorText(5, 2), '0.05');
  assert.equal(minorText(7, 0), '7');
  assert.equal(minorText(1234, 3), '1.234');
});
