/**
 * The wallet simulator: sends a Static QR Start the way a consumer wallet backend does after the
 * consumer scanned the machine's QR, and classifies the answer. The SecretToken is sent in the
 * body and nowhere else: not in the result, not in errors, not in logs.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { got } from 'got';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { classifyError } from '../../gateway/classify.js';
import type { GatewayOutcome } from '../../gateway/outcome.js';
import { StartResponseSchema, validateWith, type StartResponse } from '../../gateway/protocol/index.js';

export interface SendStartOptions {
  /** Base URL of qrvend's Start endpoint, e.g. http://127.0.0.1:8091. */
  url: string;
  integratorName: string;
  secretToken: string;
  /** One of terminalId / uniQr names the machine (both may be sent). */
  terminalId?: string;
  uniQr?: string;
  /** Default: 32 random hex characters. */
  transactionId?: string;
  balance?: number;
  /** Default: "wallet-sim-user". */
  appUserId?: string;
  consumerData?: Record<string, unknown>;
  /** Default 10 s. */
  timeoutMs?: number;
  /** Extra CA (PEM) for an HTTPS Start endpoint with a private certificate. */
  caFile?: string;
}

export interface StartResult {
  transactionId: string;
  /** Where the Start went (no secret in it). */
  endpoint: string;
  outcome: GatewayOutcome<StartResponse>;
}

export function startEndpoint(url: string, integratorName: string): string {
  return `${url.replace(/\/+$/, '')}/payment/v2/transactions/Gateway/${encodeURIComponent(integratorName)}/start`;
}

/** A new TransactionId as a wallet backend would create it (8..40 characters). */
export function newWalletTransactionId(): string {
  return randomBytes(16).toString('hex');
}

/** Reads the SecretToken from a file (trailing newline removed); the error never shows the content. */
export function readTokenFile(path: string): string {
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.SECRET_UNREADABLE,
      `the token file ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      {
        hint: 'give --token-file a readable file holding the 64-character SecretToken',
      },
    );
  }
}

/** The Start body; `ConsumerData` is the consumer-data object (see protocol/start.ts). */
export function buildStartBody(o: SendStartOptions, transactionId: string): Record<string, unknown> {
  const body: Record<string, unknown> = { AppUserId: o.appUserId ?? 'wallet-sim-user', SecretToken: o.secretToken };
  if (o.terminalId !== undefined) body.TerminalId = o.terminalId;
  if (o.uniQr !== undefined) body.UniQR = o.uniQr;
  body.TransactionId = transactionId;
  if (o.balance !== undefined) body.Balance = o.balance;
  if (o.consumerData !== undefined) body.ConsumerData = o.consumerData;
  return body;
}

function classify(httpStatus: number, text: string, elapsedMs: number): GatewayOutcome<StartResponse> {
  const failure = (kind: 'http-status' | 'not-json' | 'bad-schema', detail: string): GatewayOutcome<StartResponse> => ({
    kind: 'transport',
    failure: kind,
    detail,
    httpStatus,
    elapsedMs,
  });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return httpStatus === 200
      ? failure('not-json', 'the Start answer is not JSON')
      : failure('http-status', `HTTP ${httpStatus}`);
  }
  const checked = validateWith(StartResponseSchema, body);
  if (!checked.ok) {
    return httpStatus === 200
      ? failure('bad-schema', `the Start answer does not match the schema: ${checked.message}`)
      : failure('http-status', `HTTP ${httpStatus}`);
  }
  const response = body as StartResponse;
  const status = checked.value.Status;
  // The Start endpoint may refuse with a 4xx carrying a Declined Status: still a verdict.
  if (status.Verdict === 'Declined')
    return { kind: 'declined', code: status.Code ?? 0, message: status.StatusMessage ?? null, response, elapsedMs };
  if (httpStatus !== 200) return failure('http-status', `HTTP ${httpStatus} with an Approved status`);
  return { kind: 'approved', response, elapsedMs };
}

export async function sendStart(options: SendStartOptions): Promise<StartResult> {
  const transactionId = options.transactionId ?? newWalletTransactionId();
  const endpoint = startEndpoint(options.url, options.integratorName);
  const ca = options.caFile ? readFileSync(options.caFile) : undefined;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const res = await got.post(endpoint, {
      body: JSON.stringify(buildStartBody(options, transactionId)),
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      responseType: 'text',
      throwHttpErrors: false,
      followRedirect: false,
      retry: { limit: 0 },
      timeout: { request: options.timeoutMs ?? 10_000 },
      ...(ca ? { https: { certificateAuthority: ca } } : {}),
    });
    return { transactionId, endpoint, outcome: classify(res.statusCode, res.body, elapsed()) };
  } catch (err) {
    const { failure, detail } = classifyError(err);
    return {
      transactionId,
      endpoint,
      outcome: { kind: 'transport', failure, detail, httpStatus: null, elapsedMs: elapsed() },
    };
  }
}
