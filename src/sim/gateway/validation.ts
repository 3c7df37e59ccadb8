/**
 * Strict validation of every request the simulator receives, with the seed's rules from the
 * shared protocol module: a violation is answered Declined with 998, a missing mandatory member
 * with 997 (a Settlement without BasicInfo.Amount with 10, seed Errors 4), and a StatusMessage
 * naming the member.
 */
import type { GatewayOperation } from '../../gateway/outcome.js';
import { DeclineCodes, declinedStatus, validateRequest, type RequestOf, type Status } from '../../gateway/protocol/index.js';

export type Checked<O extends GatewayOperation> =
  | { ok: true; value: RequestOf<O>; raw: Record<string, unknown> }
  | { ok: false; status: Status; member: string; message: string; transactionId: string | null };

function transactionIdOf(raw: unknown): string | null {
  const id = (raw as { BasicInfo?: { TransactionId?: unknown } } | null)?.BasicInfo?.TransactionId;
  return typeof id === 'string' ? id : null;
}

export function checkRequest<O extends GatewayOperation>(op: O, text: string): Checked<O> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    const message = 'the body is not JSON';
    return { ok: false, status: declinedStatus(DeclineCodes.ValidationError, message), member: '', message, transactionId: null };
  }
  const result = validateRequest(op, raw);
  if (result.ok) return { ok: true, value: result.value, raw: raw as Record<string, unknown> };
  const amountMissing = op === 'Settlement' && result.code === DeclineCodes.MissingMandatory && result.member === 'BasicInfo.Amount';
  const code = amountMissing ? DeclineCodes.AmountMissing : result.code;
  const message = amountMissing ? 'amount missing: BasicInfo.Amount is missing' : result.message;
  return { ok: false, status: declinedStatus(code, message), member: result.member, message, transactionId: transactionIdOf(raw) };
}

/** Media types the seed accepts for request bodies. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || type === 'text/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}
