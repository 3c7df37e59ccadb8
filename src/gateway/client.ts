/**
 * The gateway client (got 14): one method per operation, each ending in a GatewayOutcome and
 * never throwing for anything the network or the gateway does. No automatic retry of POST: the
 * outbox owns retries, and `sendRaw` lets it replay a recorded body byte for byte.
 */
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { got, type CancelableRequest, type Got, type Response } from 'got';
import { ErrorCodes } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { readCa } from './ca-file.js';
import { classifyError, classifyResponse, transportFailure } from './classify.js';
import { checkAnswerCurrency } from './currency-check.js';
import type { GatewayOperation, GatewayOutcome } from './outcome.js';
import type { Outgoing } from './envelope.js';
import { encodeRequest } from './wire/index.js';
import {
  OPERATIONS,
  type AuthorizationRequest,
  type AuthorizationResponse,
  type CancelRequest,
  type CancelResponse,
  type GenerateQRRequest,
  type GenerateQRResponse,
  type InquiryRequest,
  type InquiryResponse,
  type RequestOf,
  type ResponseOf,
  type SettlementRequest,
  type SettlementResponse,
  type VoidRequest,
  type VoidResponse,
} from './protocol/index.js';

export interface GatewayClientOptions {
  /** https://host:port, optionally with a path prefix. */
  baseUrl: string;
  /** Deadline of the whole request, from start to the last byte of the answer. */
  timeoutMs: number;
  /** Deadline of DNS lookup, TCP connect and TLS handshake, each. */
  connectTimeoutMs: number;
  /** Extra CA bundle (PEM) trusted for the gateway's certificate; null = system CAs. */
  caFile?: string | null;
  logger?: Logger;
  /** Longest answer read (tests lower it); default MAX_RESPONSE_BYTES. */
  maxResponseBytes?: number;
  /** Told every call's outcome (the daemon's GatewayReachability logs the gateway going and coming back). */
  onOutcome?: (op: GatewayOperation, outcome: GatewayOutcome<unknown>) => void;
}

/**
 * Longest gateway answer read (docs/decisions/hardening.md item 4). The seed's largest answer (GenerateQR with its
 * PaymentInfo) is a few KiB; 64 KiB is plenty. A longer one, declared or found while downloading,
 * is aborted at once and is a transport failure like any other, retried by whoever retries: a
 * gateway that misbehaves must not be able to fill the payment worker's heap.
 */
export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface GatewayClient {
  authorization(request: AuthorizationRequest): Promise<GatewayOutcome<AuthorizationResponse>>;
  settlement(request: Outgoing<SettlementRequest>): Promise<GatewayOutcome<SettlementResponse>>;
  cancel(request: Outgoing<CancelRequest>): Promise<GatewayOutcome<CancelResponse>>;
  generateQR(request: Outgoing<GenerateQRRequest>): Promise<GatewayOutcome<GenerateQRResponse>>;
  inquiry(request: Outgoing<InquiryRequest>): Promise<GatewayOutcome<InquiryResponse>>;
  void(request: Outgoing<VoidRequest>): Promise<GatewayOutcome<VoidResponse>>;
  /** Any operation by name, the body encoded for the wire (amounts with decimals, PaymentInfo as received). */
  send<O extends GatewayOperation>(op: O, request: Outgoing<RequestOf<O>>): Promise<GatewayOutcome<ResponseOf<O>>>;
  /** Sends exactly `bodyText` (the outbox's recorded body) to the operation's path. */
  sendRaw<O extends GatewayOperation>(op: O, bodyText: string): Promise<GatewayOutcome<ResponseOf<O>>>;
  /** Closes kept-alive connections. */
  close(): void;
}

/**
 * Longest a kept-alive connection to the gateway sits idle before it is closed on our side, when
 * the server announces no shorter keep-alive: under the idle timeouts of common servers and load
 * balancers (nginx 75 s, cloud load balancers 60 s and more).
 */
export const IDLE_SOCKET_MS = 15_000;

export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const ca = options.caFile ? readCa(options.caFile) : undefined;
  const agents = createAgents(ca);
  const context: GatewayCallContext = {
    request: createRequester(agents, ca, options),
    base,
    maxResponseBytes: options.maxResponseBytes ?? MAX_RESPONSE_BYTES,
    options,
  };
  const sendRaw = <O extends GatewayOperation>(op: O, bodyText: string): Promise<GatewayOutcome<ResponseOf<O>>> =>
    callGateway(context, op, bodyText);
  const send = <O extends GatewayOperation>(op: O, request: Outgoing<RequestOf<O>>) =>
    sendRaw(op, encodeRequest(request));

  return {
    authorization: (r) => send('Authorization', r),
    settlement: (r) => send('Settlement', r),
    cancel: (r) => send('Cancel', r),
    generateQR: (r) => send('GenerateQR', r),
    inquiry: (r) => send('Inquiry', r),
    void: (r) => send('Void', r),
    send,
    sendRaw,
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

interface GatewayAgents {
  http: http.Agent;
  https: https.Agent;
}

function createAgents(ca: string | Buffer | undefined): GatewayAgents {
  // An idle kept-alive connection is dropped before the server drops it: a request written on a
  // socket the server is closing is reset, and an Authorization cannot safely be sent twice (seen
  // in the field test: ECONNRESET 6 s after the last call, against a server's 5 s keep-alive).
  // With `timeout` set, Node also honours the server's `Keep-Alive: timeout=N` hint and drops the
  // idle socket a second before N; without it the hint is ignored. The timeout touches idle
  // sockets only: a call in progress is bounded by gateway.timeoutMs alone.
  const keepAlive = { keepAlive: true, timeout: IDLE_SOCKET_MS };
  return {
    http: new http.Agent(keepAlive),
    // Certificate verification is never optional (docs/decisions/gateway-interface.md): stated here so that not even
    // NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment can turn it off.
    https: new https.Agent({ ...keepAlive, rejectUnauthorized: true, ...(ca ? { ca } : {}) }),
  };
}

/** got for gateway calls: POST, no retry (the outbox owns retries), no redirect, the deadlines set. */
function createRequester(agents: GatewayAgents, ca: string | Buffer | undefined, options: GatewayClientOptions): Got {
  const connect = options.connectTimeoutMs;
  return got.extend({
    method: 'POST',
    retry: { limit: 0 },
    throwHttpErrors: false,
    followRedirect: false,
    responseType: 'text',
    agent: agents,
    https: { rejectUnauthorized: true, ...(ca ? { certificateAuthority: ca } : {}) },
    timeout: { lookup: connect, connect, secureConnect: connect, request: options.timeoutMs },
    headers: { 'content-type': 'application/json', accept: 'application/json' },
  });
}

/** What one gateway call needs from its client. */
interface GatewayCallContext {
  request: Got;
  base: string;
  maxResponseBytes: number;
  options: GatewayClientOptions;
}

async function callGateway<O extends GatewayOperation>(
  context: GatewayCallContext,
  op: O,
  bodyText: string,
): Promise<GatewayOutcome<ResponseOf<O>>> {
  const { options } = context;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let outcome: GatewayOutcome<ResponseOf<O>>;
  let size: AnswerSizeWatch = { oversize: null };
  try {
    const pending = context.request(`${context.base}${OPERATIONS[op].path}`, { body: bodyText });
    size = watchAnswerSize(pending, context.maxResponseBytes);
    const res = await pending;
    outcome = answeredOutcome(op, bodyText, res.statusCode, res.body, elapsed(), options.logger);
  } catch (err) {
    outcome = failedOutcome(op, err, size.oversize, elapsed(), context);
  }
  options.logger?.debug(
    {
      op,
      outcome: outcome.kind,
      ...(outcome.kind === 'transport' ? { failure: outcome.failure, detail: outcome.detail } : {}),
      ...(outcome.kind === 'declined' ? { code: outcome.code } : {}),
      elapsedMs: outcome.elapsedMs,
    },
    'gateway call',
  );
  options.onOutcome?.(op, outcome);
  return outcome;
}

/** Why the answer's download was aborted for its size (docs/decisions/hardening.md item 4); null while it was not. */
interface AnswerSizeWatch {
  readonly oversize: string | null;
}

/** Cancels the call once the answer declares, or brings, more than maxResponseBytes. */
function watchAnswerSize<T extends Response | Response['body']>(
  pending: CancelableRequest<T>,
  maxResponseBytes: number,
): AnswerSizeWatch {
  const watch: { oversize: string | null } = { oversize: null };
  pending.on('response', (res: { headers: Record<string, string | string[] | undefined> }) => {
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxResponseBytes) {
      watch.oversize = `declared ${declared} bytes`;
      pending.cancel();
    }
  });
  pending.on('downloadProgress', (progress: { transferred: number }) => {
    if (watch.oversize === null && progress.transferred > maxResponseBytes) {
      watch.oversize = `more than ${maxResponseBytes} bytes received (no or false Content-Length)`;
      pending.cancel();
    }
  });
  return watch;
}

/** The gateway's answer classified, an approval in another currency than asked turned into a decline. */
function answeredOutcome<O extends GatewayOperation>(
  op: O,
  bodyText: string,
  statusCode: number,
  body: string,
  elapsedMs: number,
  logger: Logger | undefined,
): GatewayOutcome<ResponseOf<O>> {
  const checked = checkAnswerCurrency(bodyText, classifyResponse(op, statusCode, body, elapsedMs));
  if (checked.mismatch !== null) {
    logger?.warn(
      {
        op,
        code: ErrorCodes.GATEWAY_BAD_RESPONSE,
        asked: checked.mismatch.asked,
        answered: checked.mismatch.answered,
      },
      'gateway approved in another currency than asked: treated as declined (code 8)',
    );
  }
  return checked.outcome;
}

/** A call that ended without an answer: aborted for its size, or a transport failure as classified. */
function failedOutcome<O extends GatewayOperation>(
  op: O,
  err: unknown,
  oversize: string | null,
  elapsedMs: number,
  context: GatewayCallContext,
): GatewayOutcome<ResponseOf<O>> {
  if (oversize === null) {
    const { failure, detail } = classifyError(err);
    return transportFailure(failure, `${op}: ${detail}`, elapsedMs);
  }
  const { maxResponseBytes } = context;
  const outcome: GatewayOutcome<ResponseOf<O>> = transportFailure(
    'too-large',
    `${op}: answer too large (${oversize}; limit ${maxResponseBytes}): download aborted`,
    elapsedMs,
  );
  context.options.logger?.warn(
    { op, code: ErrorCodes.GATEWAY_BAD_RESPONSE, size: oversize, limitBytes: maxResponseBytes },
    'gateway answer too large: aborted, treated as a transport failure',
  );
  return outcome;
}

/** A client from the configuration's `gateway` section. */
export function gatewayClientFromConfig(
  gateway: { baseUrl: string; timeoutMs: number; connectTimeoutMs: number; caFile: string | null },
  logger?: Logger,
  onOutcome?: GatewayClientOptions['onOutcome'],
): GatewayClient {
  return createGatewayClient({ ...gateway, ...(logger ? { logger } : {}), ...(onOutcome ? { onOutcome } : {}) });
}
