/**
 * How every gateway call ends. A verdict (Approved or Declined) is an answer from the gateway;
 * anything else is a transport failure, never a verdict: the request may or may not have been
 * processed, so the caller decides (the outbox retries, a flow cancels or voids).
 */
export type TransportFailureKind =
  | 'timeout' // no complete response within the configured deadline (any phase)
  | 'reset' // connection reset or closed mid-exchange
  | 'refused' // connection refused / host unreachable / DNS failure
  | 'http-status' // HTTP status other than 200
  | 'not-json' // 200 with a body that is not JSON
  | 'bad-schema' // 200 with JSON that does not match the operation's response schema
  | 'too-large'; // an answer declared or found longer than MAX_RESPONSE_BYTES: download aborted

export type GatewayOutcome<R> =
  /** `bodyText` is the answer exactly as received (PaymentInfo is echoed from it byte for byte). */
  | { kind: 'approved'; response: R; elapsedMs: number; bodyText?: string }
  /**
   * `heldFunds`: the gateway actually approved, but in another currency than asked, so qrvend
   * refuses it; the money it holds must be released (Cancel / Void), unlike a real decline.
   */
  | {
      kind: 'declined';
      code: number;
      message: string | null;
      response: R;
      elapsedMs: number;
      bodyText?: string;
      heldFunds?: true;
      /** With heldFunds: the currencies asked and answered, as `CODE/NUMERIC` (checked characters only). */
      currencies?: { asked: string; answered: string };
    }
  | { kind: 'transport'; failure: TransportFailureKind; detail: string; httpStatus: number | null; elapsedMs: number };

/** The gateway operations qrvend calls (Start is served by qrvend, not called). */
export type GatewayOperation = 'Authorization' | 'Settlement' | 'Cancel' | 'GenerateQR' | 'Inquiry' | 'Void';

/** Decline codes that mean "try the same request again later" (the outbox retries them). */
export const RETRYABLE_DECLINE_CODES: ReadonlySet<number> = new Set([6, 30, 992, 999]);
