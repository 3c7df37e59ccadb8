/**
 * What the relay hands back to a wallet from a machine (docs/decisions/fleet-trust.md item 9: a machine's 302 text/html
 * <script> answer reached the wallet as it was; a status 100 reset the wallet's connection). Only
 * an answer that conforms to the seed passes: HTTP 200 with a JSON Start response (the seed's
 * Status, the TransactionId the wallet sent when Approved), or one of the HTTP refusals
 * docs/relay.md documents (404, 405, 413, 415, 429) with a Declined Start response. Anything else
 * is answered Declined 30 by the relay, and the Start is not confirmed (the machine authorizes nothing).
 */
import { StartResponseSchema } from '../gateway/protocol/start.js';
import type { RelayedStartResult } from '../fleet/contract/index.js';

export const DOCUMENTED_REFUSALS: ReadonlySet<number> = new Set([404, 405, 413, 415, 429]);
/** The seed's response media types, with parameters (charset) allowed. */
const JSON_TYPE = /^(application\/json|text\/json)\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

export type AnswerCheck = { ok: true; approved: boolean } | { ok: false; why: string };

export function checkAnswer(result: RelayedStartResult, transactionId: string | undefined): AnswerCheck {
  const status = result.httpStatus;
  if (status !== 200 && !DOCUMENTED_REFUSALS.has(status)) return { ok: false, why: `HTTP status ${status}` };
  if (!JSON_TYPE.test(result.contentType)) return { ok: false, why: 'not a JSON media type' };
  let body: unknown;
  try {
    body = JSON.parse(result.body);
  } catch {
    return { ok: false, why: 'a body that is not JSON' };
  }
  const parsed = StartResponseSchema.safeParse(body);
  if (!parsed.success) return { ok: false, why: 'not a Start response' };
  const approved = parsed.data.Status.Verdict === 'Approved';
  if (approved && (status !== 200 || parsed.data.TransactionId !== transactionId))
    return { ok: false, why: 'an approval of another Start' };
  return { ok: true, approved };
}
