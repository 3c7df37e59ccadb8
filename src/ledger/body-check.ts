/**
 * A last guard on request bodies before they become durable promises to the gateway. The flows
 * build the bodies; the ledger checks only what its own records can vouch for (the TransactionId,
 * and for a Settlement the amount and the Products count), because a wrong Settlement recorded
 * here would be sent, retried and kept byte for byte.
 */
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { toMinor } from './money.js';
import type { OutboxOperation } from './types.js';

interface BodyShape {
  BasicInfo?: { TransactionId?: unknown; Amount?: unknown };
  Products?: unknown;
}

function refuse(op: OutboxOperation, txId: string, why: string): QrvendError {
  return new QrvendError(ErrorCodes.INTERNAL, `refused to record a ${op} for ${txId}: ${why}`, {
    hint: 'this is a bug in the payment flow that built the body; the transaction was left unchanged',
    details: { txId, op },
  });
}

export interface SettlementExpectation {
  amountMinor: number;
  decimalPlaces: number;
  products: number;
}

export function checkBody(op: OutboxOperation, txId: string, body: string, settlement?: SettlementExpectation): void {
  let parsed: BodyShape;
  try {
    parsed = JSON.parse(body) as BodyShape;
  } catch {
    throw refuse(op, txId, 'the body is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || parsed.BasicInfo?.TransactionId !== txId) {
    throw refuse(op, txId, 'BasicInfo.TransactionId does not name this transaction');
  }
  if (settlement === undefined) return;
  const amount = parsed.BasicInfo.Amount;
  if (
    typeof amount !== 'number' ||
    toMinor(amount, settlement.decimalPlaces, 'BasicInfo.Amount') !== settlement.amountMinor
  ) {
    throw refuse(op, txId, `BasicInfo.Amount ${String(amount)} is not the sum of the successful vends`);
  }
  if (!Array.isArray(parsed.Products) || parsed.Products.length !== settlement.products) {
    throw refuse(op, txId, `Products must hold one entry per successful vend (${settlement.products})`);
  }
}
