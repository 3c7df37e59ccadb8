/**
 * The Cancel ReasonCode of a static session that sold nothing (cancelReasonCode in
 * src/flows/static-qr/flow.ts): 2 (cancelled by the consumer) when the consumer cancelled, or the
 * VMC ended the session before any vend was approved; 3 (cancelled by the machine) for everything
 * the machine did: an approved vend not dispensed, a timeout, a reset, a disable, a lost link.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReasonCodes } from '../../../src/gateway/protocol/index.js';
import { cancelReasonCode } from '../../../src/flows/static-qr/flow.js';
import type { SessionEndReason } from '../../../src/ipc/messages.js';

/** Every reason there is: a reason added to SessionEndReason fails to compile here until it is listed. */
const EVERY_REASON: Record<SessionEndReason, true> = {
  complete: true,
  'consumer-cancel': true,
  'reader-cancel': true,
  'idle-timeout': true,
  'vmc-reset': true,
  disabled: true,
  'link-lost': true,
};

test("the codes are the gateway interface's: 2 by the consumer, 3 by the machine", () => {
  assert.equal(ReasonCodes.CancelledByConsumer, 2);
  assert.equal(ReasonCodes.CancelledByMachine, 3);
});

test('every session end reason and approved-vend count gets its ReasonCode', () => {
  const expected = (reason: SessionEndReason, approvedVends: number): number => {
    if (reason === 'consumer-cancel') return 2; // the consumer's choice, whatever was tried before
    // ended by the VMC: nothing tried is the consumer walking away
    if (reason === 'complete') return approvedVends === 0 ? 2 : 3;
    return 3;
  };
  for (const reason of Object.keys(EVERY_REASON) as SessionEndReason[]) {
    for (const approvedVends of [0, 1, 2, 7]) {
      assert.equal(
        cancelReasonCode(reason, approvedVends),
        expected(reason, approvedVends),
        `${reason} with ${approvedVends} approved vend(s)`,
      );
    }
  }
});

test('named cases, as a technician reads them on a Cancel', () => {
  assert.equal(
    cancelReasonCode('complete', 0),
    2,
    'the VMC ended the session before any selection: the consumer walked away',
  );
  assert.equal(
    cancelReasonCode('complete', 1),
    3,
    'a vend was approved and not dispensed: the machine failed the consumer',
  );
  assert.equal(cancelReasonCode('consumer-cancel', 1), 2, 'the consumer pressed cancel after a failed vend');
  assert.equal(cancelReasonCode('idle-timeout', 0), 3, 'the reader timed the session out');
  assert.equal(cancelReasonCode('link-lost', 0), 3);
  assert.equal(cancelReasonCode('vmc-reset', 0), 3);
  assert.equal(cancelReasonCode('disabled', 0), 3);
  assert.equal(cancelReasonCode('reader-cancel', 0), 3, 'qrvend stopped it (shutdown, funds used up)');
});
