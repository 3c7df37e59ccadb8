/**
 * Driving a Dynamic QR payment from the outside: the consumer selects on an always-idle (or
 * virtual-credit) VMC, the daemon runs GenerateQR and Inquiry polling, the VMC gets its answer.
 */
import assert from 'node:assert/strict';
import type { AgentRig } from '../../../rigs/rig.js';
import type { BoardCommand } from '../../../src/mdb/codec/index.js';
import { logMark, nextVendAnswer, waitLogAfter } from './e2e-rig.js';

export interface DynamicPayment {
  txId: string;
  requestId: string;
  /** The reader's answer to the selection (C,VEND,<amount> or C,VEND,-1). */
  answer: Promise<BoardCommand>;
  /** The daemon's final word on the payment (vended, declined, expired, not-issued, voided, cancelled). */
  result: Promise<string>;
}

/** The consumer selects `item` at `price`; resolves once the daemon has started the payment. */
export async function selectAndPay(
  rig: AgentRig,
  item: number,
  price: number,
  answerTimeoutMs = 10_000,
): Promise<DynamicPayment> {
  const mark = logMark(rig);
  const answer = nextVendAnswer(rig, answerTimeoutMs);
  answer.catch(() => {}); // a test that never looks at the answer must not leave a rejection behind
  assert.ok(rig.vmc.select(item, price), 'the VMC could not select (reader not enabled, or a vend pending)');
  const started = await waitLogAfter(
    rig,
    mark,
    (l) => l.msg === 'dynamic QR payment started' && l.item === item,
    'the dynamic QR payment to start',
  );
  const txId = String(started.txId);
  const requestId = String(started.requestId);
  const result = waitLogAfter(
    rig,
    mark,
    (l) => l.msg === 'dynamic QR payment ended' && l.txId === txId,
    'the dynamic QR payment to end',
    15_000,
  ).then((l) => String(l.result));
  result.catch(() => {});
  return { txId, requestId, answer, result };
}
