/**
 * What the simulated gateway's handlers share: the request and context they get, declines with
 * their text, the once-per-body answer of a closing operation (Settlement, Cancel, Void) and the
 * PaymentInfo it issues, kept as the exact text it sent. The handlers themselves:
 * static-handlers.ts (Authorization, Settlement, Cancel) and dynamic-handlers.ts (GenerateQR,
 * Inquiry, Void).
 */
import type { GatewayOperation } from '../../gateway/outcome.js';
import { RETRYABLE_DECLINE_CODES } from '../../gateway/outcome.js';
import {
  declinedStatus,
  DeclineCodes,
  DECLINE_CODE_TEXT,
  type PaymentInfo,
  type RequestOf,
  type Status,
} from '../../gateway/protocol/index.js';
import { composePaymentInfo, memberText, RawJson, stringifyWire } from '../../gateway/wire/index.js';
import type { Behaviours } from './behaviours.js';
import type { ClosingOperation, ClosingRecord, Decision, SimLedger, TxRecord } from './ledger.js';

export interface HandlerContext {
  ledger: SimLedger;
  behaviours: Behaviours;
  now: () => Date;
}

/** A valid request: its validated value, the parsed JSON as sent, and the exact text. */
export interface IncomingRequest<O extends GatewayOperation> {
  value: RequestOf<O>;
  raw: Record<string, unknown>;
  text: string;
}

export const decline = (code: number, why: string): Status =>
  declinedStatus(code, `${DECLINE_CODE_TEXT[code] ?? 'declined'}: ${why}`);
export const decisionOf = (s: Status): Decision => ({
  verdict: s.Verdict,
  code: s.Code ?? null,
  message: s.StatusMessage ?? null,
});
export const digits = (n: number, width: number) => String(n).padStart(width, '0').slice(-width);

/** Answers a closing operation once per body; repeats get the stored bytes, other bodies a conflict. */
export function closing<O extends ClosingOperation>(
  op: O,
  req: IncomingRequest<O>,
  ctx: HandlerContext,
  flow: TxRecord['flow'],
  decide: () => Record<string, unknown> & { Status: Status },
): string {
  const txId = req.value.BasicInfo.TransactionId;
  const stored = ctx.ledger.storedAnswer(op, txId);
  if (stored !== undefined) {
    if (stored.bodyText === req.text) {
      ctx.ledger.duplicate(txId, op);
      return stored.answerText;
    }
    if (stored.approved) {
      const reason = `a different ${op} body for this TransactionId was already processed`;
      ctx.ledger.conflict(txId, op, reason, flow);
      return stringifyWire({ Status: decline(DeclineCodes.NotAllowed, reason) });
    }
    // The earlier body was declined for good (e.g. 998): nothing was processed, so a corrected
    // request is judged on its own body.
  }
  const answer = decide();
  const text = stringifyWire(answer);
  const code = answer.Status.Code;
  // A retryable decline (6, 30, 992, 999) invites the same request again: do not pin it.
  if (!(answer.Status.Verdict === 'Declined' && code != null && RETRYABLE_DECLINE_CODES.has(code))) {
    ctx.ledger.storeAnswer(op, txId, {
      bodyText: req.text,
      answerText: text,
      approved: answer.Status.Verdict === 'Approved',
    });
  }
  return text;
}

export function closingRecord(
  status: Status,
  amount: number,
  extra: { reasonCode?: number | null; timeout?: boolean; products?: number },
): ClosingRecord {
  return {
    ...decisionOf(status),
    amount,
    reasonCode: extra.reasonCode ?? null,
    gatewayTimeout: extra.timeout ?? false,
    products: extra.products ?? 0,
  };
}

/** A PaymentInfo this gateway issues: the object (for the ledger view) and the exact text it sent. */
export interface Issued {
  value: PaymentInfo;
  text: string;
}

export function issue(value: PaymentInfo, dp: number): Issued {
  return { value, text: composePaymentInfo(value, dp).text };
}

/** The PaymentInfo member of a request exactly as sent (null when absent). */
export const sentPaymentInfo = (req: IncomingRequest<GatewayOperation>): string | null =>
  memberText(req.text, 'PaymentInfo');

/** An answer with the PaymentInfo written exactly as issued. */
export function withPaymentInfo(issued: Issued | null | undefined, status: Status): string {
  return stringifyWire(issued ? { PaymentInfo: new RawJson(issued.text), Status: status } : { Status: status });
}
