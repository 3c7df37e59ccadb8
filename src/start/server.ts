/**
 * The Static QR Start endpoint: `POST /payment/v2/transactions/Gateway/{integratorName}/start`
 * on `start.listen`, HTTPS when `start.certFile`/`start.keyFile` are set, plain HTTP otherwise
 * (behind a TLS-terminating proxy). It runs in the payment worker; the hooks are the payment side.
 *
 * This file holds the sockets: timeouts, connection bound, body reading, writing answers and
 * logging them. What to answer is decided in exchange.ts and request-checks.ts.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { httpRefusals, type StartAnswer } from './answers.js';
import { readLimitedBody } from './body.js';
import { createGuardedServer } from './guarded-server.js';
import { readTlsFiles } from './listen.js';
import { createStartCore, type StartCore, type StartCoreOptions } from './core.js';
import type { StartEndpointStats } from './stats.js';
import { clientOf, writeAnswer } from './respond.js';
import type { StartServerLimits } from './server-limits.js';

export type { StartServerLimits };

export const DEFAULT_START_LIMITS: StartServerLimits = {
  // A wallet backend sends its head in one packet; 2 s is generous and frees a slot quickly.
  headersTimeoutMs: 2_000,
  bodyTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  idleSocketTimeoutMs: 15_000,
  maxConnections: 64,
  maxConnectionsPerSource: 8,
  suspectShare: 0.5,
  suspectForMs: 60_000,
  maxHeaderBytes: 8_192,
  lingerMs: 2_000,
  closeGraceMs: 2_000,
};

/** What the machine's Start decisions need (core.ts), plus the HTTP server's own limits. */
export interface StartEndpointOptions extends StartCoreOptions {
  limits?: Partial<StartServerLimits>;
  /**
   * The machine's Start decisions, when they are shared with the relayed path (relayed.ts);
   * made from the options above when absent.
   */
  core?: StartCore;
}

export interface StartEndpoint {
  /**
   * The full Start URL a wallet backend calls, e.g. http://127.0.0.1:8091/payment/v2/transactions/Gateway/qrvend/start.
   */
  url: string;
  /** scheme://host:port, without a path. */
  origin: string;
  port: number;
  close(): Promise<void>;
  stats(): StartEndpointStats;
}

export async function startStartEndpoint(options: StartEndpointOptions): Promise<StartEndpoint> {
  const limits = {
    ...DEFAULT_START_LIMITS,
    maxConnectionsPerSource: options.start.maxConnectionsPerSource,
    ...options.limits,
  };
  const { start } = options;
  const listen = listenAddressOf(start);
  const core = options.core ?? createStartCore(options);
  const { exchange, stats, log, describeError } = core;

  const tls = start.certFile !== null && start.keyFile !== null ? readTlsFiles(start.certFile, start.keyFile) : null;
  const {
    server,
    guard,
    strike,
    listen: listenOn,
    close,
  } = createGuardedServer({
    limits,
    tls,
    onRefused: () => stats.connectionRefused(),
    onClientError: () => stats.clientError(),
    onParserRefusal: (answer, socket, parserCode) => {
      stats.answered(answer);
      log.info(
        { remote: clientOf(socket), http: answer.httpStatus, reason: answer.reason, parser: parserCode },
        'Start request refused by the HTTP parser',
      );
    },
  });
  answerStartRequests(server, { core, limits, start, strike });
  if (tls) server.on('tlsClientError', () => stats.clientError());

  const { origin, port: boundPort } = await listenOn(listen);
  server.on('error', (err) => log.error({ err: describeError(err) }, 'Start endpoint server error'));

  const url = `${origin}/payment/v2/transactions/Gateway/${encodeURIComponent(start.integratorName)}/start`;
  log.info({ url, tls: tls !== null }, 'Start endpoint listening');

  return {
    url,
    origin,
    port: boundPort,
    stats: () => stats.snapshot(exchange.limiter.trackedClients, guard),
    close,
  };
}

/** start.listen, or the refusal to run an endpoint that has no inbound port. */
function listenAddressOf(start: StartEndpointOptions['start']): string {
  if (start.listen === null) {
    throw new QrvendError(
      ErrorCodes.CONFIG_INVALID,
      'the Start endpoint was asked to listen but start.listen is null (no inbound port)',
      {
        hint: 'set start.listen to host:port, or leave the endpoint off and take Starts through qrvend relay only',
      },
    );
  }
  return start.listen;
}

/** What answering one Start request needs: the decisions, the limits, and the guard's strike. */
interface StartRequestContext {
  core: StartCore;
  limits: StartServerLimits;
  start: StartEndpointOptions['start'];
  strike(socket: Socket): void;
}

/** Routes every request (and every Expect: 100-continue) to handleStart; other expectations fail. */
function answerStartRequests(server: Server, context: StartRequestContext): void {
  const { stats, log, describeError } = context.core;
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handleStart(context, req, res).catch((err: unknown) => {
      log.error({ err: describeError(err) }, 'Start request handling failed');
      if (!res.headersSent && !res.destroyed) send(context, req, res, httpRefusals.internalError(), true);
      else res.destroy();
    });
  };
  server.on('request', onRequest);
  server.on('checkContinue', onRequest);
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    stats.request();
    send(context, req, res, httpRefusals.expectationFailed(), true);
  });
}

function send(
  context: StartRequestContext,
  req: IncomingMessage,
  res: ServerResponse,
  answer: StartAnswer,
  bodyUnread: boolean,
): void {
  const { core } = context;
  core.stats.answered(answer);
  const remote = clientOf(req.socket);
  writeAnswer(res, answer, bodyUnread, context.limits.lingerMs);
  // An accepted Start's Authorization goes out now (docs/decisions/sales-and-recovery.md: answered, then authorized),
  // and the answer's log line after this turn: a synchronous log write must not sit in front of it.
  core.answered(answer);
  setImmediate(() => core.logAnswer(remote, answer));
}

async function handleStart(context: StartRequestContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { core, limits, start } = context;
  const { exchange, stats } = core;
  stats.request();
  const pre = exchange.preflight({
    method: req.method ?? '',
    url: req.url ?? '',
    headers: req.headers,
    client: clientOf(req.socket),
  });
  if (!pre.ok) return send(context, req, res, pre.answer, true);
  // Only now, with the head accepted, is a client that waits for it told to send the body.
  // (Node's own test for the header, so every request it routed to 'checkContinue' gets its 100.)
  if (/(?:^|\W)100-continue(?:$|\W)/i.test(req.headers.expect ?? '')) res.writeContinue();

  const received = await readLimitedBody(req, start.maxBodyBytes, limits.bodyTimeoutMs);
  switch (received.kind) {
    case 'too-large':
      return send(context, req, res, httpRefusals.tooLarge(start.maxBodyBytes), true);
    case 'timeout':
      context.strike(req.socket);
      return send(context, req, res, httpRefusals.timedOut(), true);
    case 'aborted':
      stats.aborted();
      return;
    case 'body':
      return send(context, req, res, await exchange.decide(pre.integratorName, received.body), false);
  }
}
