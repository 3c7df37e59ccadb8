/**
 * Turning what came back from an HTTP exchange into a GatewayOutcome. Kept apart from the got
 * plumbing so the rules read in one place: only an HTTP 200 whose body is JSON matching the
 * operation's response schema is a verdict; everything else is a transport failure.
 */
import type { GatewayOperation, GatewayOutcome, TransportFailureKind } from './outcome.js';
import { validateResponse, type ResponseOf } from './protocol/index.js';

export function transportFailure(
  failure: TransportFailureKind,
  detail: string,
  elapsedMs: number,
  httpStatus: number | null = null,
): GatewayOutcome<never> {
  return { kind: 'transport', failure, detail, httpStatus, elapsedMs };
}

/**
 * Classifies a complete HTTP response. The returned `response` is the parsed JSON itself, not a
 * re-built copy, so a PaymentInfo echoed later keeps every member, value and order it came with.
 */
export function classifyResponse<O extends GatewayOperation>(
  op: O,
  httpStatus: number,
  bodyText: string,
  elapsedMs: number,
): GatewayOutcome<ResponseOf<O>> {
  if (httpStatus !== 200) return transportFailure('http-status', `${op}: HTTP ${httpStatus}`, elapsedMs, httpStatus);
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return transportFailure(
      'not-json',
      `${op}: the response body is not JSON (${bodyText.length} bytes)`,
      elapsedMs,
      httpStatus,
    );
  }
  const checked = validateResponse(op, body);
  if (!checked.ok) {
    return transportFailure(
      'bad-schema',
      `${op}: the response does not match the schema: ${checked.message}`,
      elapsedMs,
      httpStatus,
    );
  }
  const response = body as ResponseOf<O>;
  const status = checked.value.Status;
  if (status.Verdict === 'Approved') return { kind: 'approved', response, elapsedMs, bodyText };
  return {
    kind: 'declined',
    code: status.Code ?? 0,
    message: status.StatusMessage ?? null,
    response,
    elapsedMs,
    bodyText,
  };
}

const REFUSED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
const RESET = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'HPE_INVALID_CONSTANT']);

/**
 * Classifies a failed exchange by its error. A TLS failure while connecting counts as refused:
 * no request reached the gateway. Anything unknown counts as a reset, the cautious reading
 * (the request may have been processed).
 */
export function classifyError(err: unknown): { failure: TransportFailureKind; detail: string } {
  const e = err as { name?: string; code?: string; message?: string };
  const code = e.code ?? '';
  const detail = `${code || e.name || 'error'}: ${e.message ?? String(err)}`;
  if (e.name === 'TimeoutError' || code === 'ETIMEDOUT') return { failure: 'timeout', detail };
  if (REFUSED.has(code)) return { failure: 'refused', detail };
  if (RESET.has(code)) return { failure: 'reset', detail };
  if (code.startsWith('ERR_TLS') || code.includes('CERT') || code === 'EPROTO') return { failure: 'refused', detail };
  return { failure: 'reset', detail };
}
