/**
 * What the Start endpoint says back. Every answer, including the HTTP-level refusals (404, 405,
 * 413, 415, 429, ...), carries a body valid against the protocol's StartResponseSchema, so a
 * wallet backend always finds a Status to read.
 *
 * HTTP-level codes chosen where the seed is silent (docs/payments.md, "The Static QR Start endpoint"):
 * - 404 unknown path, 405 wrong method, 413 body too large, 415 wrong Content-Type, 400 request
 *   the HTTP parser refused, 431 headers too large, 417 unsupported Expect: Declined 998.
 * - 408 headers or body too slow: Declined 992 (timeout).
 * - 429 rate limit: Declined 3 (count limit exceeded), with Retry-After.
 * - A failure of the endpoint itself: HTTP 200, Declined 999 (never a 5xx).
 * Checks on the body itself answer HTTP 200, as the seed says every response is.
 */
import { ConsumerDataSchema, START_LIMITS, type StartResponse } from '../gateway/protocol/start.js';
import { approvedStatus, declinedStatus } from '../gateway/protocol/status.js';
import { DeclineCodes } from '../gateway/protocol/codes.js';

export interface StartAnswer {
  httpStatus: number;
  body: StartResponse;
  /** Extra response headers (Allow, Retry-After). */
  headers?: Record<string, string>;
  /** Why, for the log line and the stats. Never holds request content beyond member names. */
  reason: string;
  /** The TransactionId the answer is about, when the body had a usable one (for logs). */
  transactionId?: string;
}

/** What of the request is echoed: the TransactionId and the ConsumerData, when well formed. */
/** What a journal line says of an answer, the same for the machine's endpoint and the relay. */
export function answerLogFields(remote: string, answer: StartAnswer): Record<string, unknown> {
  const { Verdict, Code } = answer.body.Status;
  return {
    remote,
    http: answer.httpStatus,
    verdict: Verdict,
    code: Code ?? undefined,
    reason: answer.reason,
    txId: answer.transactionId,
  };
}

export interface Echo {
  TransactionId?: string;
  ConsumerData?: Record<string, unknown>;
}

/** Picks what can be echoed from a parsed body; anything malformed is simply not echoed. */
export function echoOf(body: unknown): Echo {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return {};
  const record = body as Record<string, unknown>;
  const echo: Echo = {};
  const tx = record['TransactionId'];
  if (typeof tx === 'string' && tx.length <= START_LIMITS.TransactionIdMax) echo.TransactionId = tx;
  const consumerData = record['ConsumerData'];
  // The raw object is echoed (not zod's copy), so the wallet gets back exactly what it sent.
  if (ConsumerDataSchema.safeParse(consumerData).success) echo.ConsumerData = consumerData as Record<string, unknown>;
  return echo;
}

export function approved(echo: Echo, reason = 'accepted'): StartAnswer {
  return { httpStatus: 200, body: { Status: approvedStatus(), ...echo }, reason, ...txOf(echo) };
}

export function declined(
  code: number,
  message: string,
  echo: Echo = {},
  httpStatus = 200,
  reason = message,
): StartAnswer {
  return { httpStatus, body: { Status: declinedStatus(code, message), ...echo }, reason, ...txOf(echo) };
}

function txOf(echo: Echo): { transactionId?: string } {
  return echo.TransactionId === undefined ? {} : { transactionId: echo.TransactionId };
}

export const httpRefusals = {
  notFound: (): StartAnswer =>
    declined(
      DeclineCodes.ValidationError,
      'unknown path: POST /payment/v2/transactions/Gateway/{integratorName}/start',
      {},
      404,
      'unknown path',
    ),
  methodNotAllowed: (): StartAnswer => ({
    ...declined(DeclineCodes.ValidationError, 'method not allowed: use POST', {}, 405, 'wrong method'),
    headers: { Allow: 'POST' },
  }),
  unsupportedMediaType: (): StartAnswer =>
    declined(
      DeclineCodes.ValidationError,
      'unsupported Content-Type: send application/json (UTF-8)',
      {},
      415,
      'wrong content type',
    ),
  tooLarge: (maxBytes: number): StartAnswer =>
    declined(DeclineCodes.ValidationError, `body too large: at most ${maxBytes} bytes`, {}, 413, 'body too large'),
  timedOut: (): StartAnswer =>
    declined(DeclineCodes.Timeout, 'request not received in time', {}, 408, 'request too slow'),
  rateLimited: (retryAfterMs: number): StartAnswer => ({
    ...declined(
      DeclineCodes.CountLimitExceeded,
      'too many requests from this address: retry later',
      {},
      429,
      'rate limited',
    ),
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
  }),
  badRequest: (): StartAnswer =>
    declined(DeclineCodes.ValidationError, 'malformed HTTP request', {}, 400, 'malformed HTTP request'),
  headersTooLarge: (): StartAnswer =>
    declined(DeclineCodes.ValidationError, 'request headers too large', {}, 431, 'headers too large'),
  /** A failure of the endpoint itself: still a Declined with HTTP 200, never a 5xx. */
  internalError: (): StartAnswer =>
    declined(DeclineCodes.GeneralException, 'general exception: Start not accepted', {}, 200, 'internal error'),
  expectationFailed: (): StartAnswer =>
    declined(
      DeclineCodes.ValidationError,
      'unsupported Expect header: only 100-continue',
      {},
      417,
      'unsupported Expect',
    ),
};

/**
 * Serialises an answer. JSON.stringify recurses, so a pathologically deep ConsumerData could
 * overflow the stack; the answer then goes out without the echo rather than not at all.
 */
export function serialize(answer: StartAnswer): string {
  try {
    return JSON.stringify(answer.body);
  } catch {
    return JSON.stringify({ Status: answer.body.Status, TransactionId: answer.body.TransactionId });
  }
}
