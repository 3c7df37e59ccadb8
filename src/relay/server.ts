/**
 * `qrvend relay`'s HTTP(S) server: the seed's Start path for every machine of the fleet, and
 * `GET /healthz` for the load balancer. What it reuses from the machine's own endpoint, so the two
 * answer alike: the head checks and the per-source rate limit (exchange.ts's preflight), the
 * connection guard, the bounded body reader, the first body checks (a body the relay cannot read
 * gets the machine's own answer), the Declined bodies (answers.ts) and the socket handling.
 *
 * What it adds: the machine is found from the Start's TerminalId/UniQR in the retained status;
 * unknown machine: Declined 50; offline, not taking relayed Starts, broker away, overloaded, or no
 * answer within relay.timeoutMs: Declined 30; otherwise the machine's answer goes back unchanged
 * (status, content type, body). The body and the SecretToken are never logged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../core/log.js';
import { DeclineCodes } from '../gateway/protocol/codes.js';
import { declined, httpRefusals, type Echo, type StartAnswer } from '../start/answers.js';
import { readLimitedBody } from '../start/body.js';
import { readStartBody } from '../start/checks.js';
import { createGuardedServer } from '../start/guarded-server.js';
import { createStartPreflight } from '../start/exchange.js';
import { readTlsFiles } from '../start/listen.js';
import { clientOf, scrubbedError, writeAnswer } from '../start/respond.js';
import { DEFAULT_START_LIMITS } from '../start/server.js';
import type { RelayedStartResult } from '../fleet/contract/index.js';
import type { BrokerLink, RequestOutcome } from './broker-link.js';
import type { RelayConfig } from './config.js';

export interface RelayCounters {
  requests: number;
  forwarded: number;
  /** Answers by what the relay did: machine (the machine's answer), unknown (50), offline/timeout/broker-down/overloaded/refused (30), local (a refusal of the relay's own: rate, path, body). */
  byOutcome: Record<string, number>;
}

export interface RelayServer {
  /** scheme://host:port */
  origin: string;
  port: number;
  counters(): RelayCounters;
  close(): Promise<void>;
}

const MACHINE_NOT_RESPONDING = 'machine not responding';

/** The wallet's address: the socket's, or the last X-Forwarded-For entry behind a trusted load balancer. */
function sourceOf(req: IncomingMessage, trustForwardedFor: boolean): string {
  if (trustForwardedFor) {
    const header = req.headers['x-forwarded-for'];
    const value = Array.isArray(header) ? header[header.length - 1] : header;
    const last = value?.split(',').pop()?.trim();
    if (last !== undefined && /^[0-9A-Fa-f.:]{2,45}$/.test(last)) return last.startsWith('::ffff:') ? last.slice(7) : last;
  }
  return clientOf(req.socket);
}

function writeResult(res: ServerResponse, result: RelayedStartResult): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(result.httpStatus, {
    'Content-Type': result.contentType,
    'Content-Length': Buffer.byteLength(result.body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...(result.retryAfterS === undefined ? {} : { 'Retry-After': String(result.retryAfterS) }),
  });
  res.end(result.body);
}

/** Status and code of the machine's answer, for the log line only. */
function verdictOf(result: RelayedStartResult): { verdict?: string; code?: number } {
  try {
    const status = (JSON.parse(result.body) as { Status?: { Verdict?: unknown; Code?: unknown } }).Status;
    return {
      ...(typeof status?.Verdict === 'string' ? { verdict: status.Verdict.slice(0, 16) } : {}),
      ...(typeof status?.Code === 'number' ? { code: status.Code } : {}),
    };
  } catch {
    return {};
  }
}

function notResponding(kind: Exclude<RequestOutcome['kind'], 'answer' | 'too-large'> | 'offline' | 'not-accepting', echo: Echo): StartAnswer {
  const why: Record<typeof kind, string> = {
    offline: 'the machine is offline',
    'not-accepting': 'the machine does not take relayed Starts',
    timeout: 'no answer from the machine in time',
    'broker-down': 'the machine cannot be reached now',
    overloaded: 'too many Starts waiting; retry',
    refused: 'the machine could not take the Start',
  };
  return declined(DeclineCodes.MachineNotResponding, `${MACHINE_NOT_RESPONDING}: ${why[kind]}`, echo, 200, kind);
}

export async function startRelayServer(config: RelayConfig, link: BrokerLink, log: Logger): Promise<RelayServer> {
  const limits = { ...DEFAULT_START_LIMITS, maxConnections: config.maxConnections, maxConnectionsPerSource: Math.min(config.maxConnectionsPerSource, config.maxConnections) };
  const slog = log.child({ component: 'relay' });
  const preflight = createStartPreflight({ maxBodyBytes: config.maxBodyBytes, rateLimit: config.rateLimit });
  const counters: RelayCounters = { requests: 0, forwarded: 0, byOutcome: {} };
  const count = (outcome: string) => (counters.byOutcome[outcome] = (counters.byOutcome[outcome] ?? 0) + 1);

  const tls = config.certFile !== null && config.keyFile !== null ? readTlsFiles(config.certFile, config.keyFile) : null;
  const { server, strike, listen, close } = createGuardedServer({ limits, tls });

  function local(res: ServerResponse, remote: string, answer: StartAnswer, bodyUnread: boolean, outcome = 'local'): void {
    count(outcome);
    const { Verdict, Code } = answer.body.Status;
    const fields = { remote, http: answer.httpStatus, verdict: Verdict, code: Code ?? undefined, reason: answer.reason, txId: answer.transactionId, outcome };
    // A flood of refused requests must not flood the journal (the machine logs 429 at debug too).
    if (answer.httpStatus === 429) slog.debug(fields, 'relay answered');
    else slog.info(fields, 'relay answered');
    writeAnswer(res, answer, bodyUnread, limits.lingerMs);
  }

  function health(res: ServerResponse): void {
    const stats = link.stats();
    const ok = stats.connected;
    const payload = JSON.stringify({ ok, broker: stats.connected ? 'connected' : 'disconnected', machines: stats.machines, online: stats.online, inFlight: stats.inFlight });
    res.writeHead(ok ? 200 : 503, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(payload), 'Cache-Control': 'no-store' });
    res.end(payload);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const remote = sourceOf(req, config.trustForwardedFor);
    if (req.method === 'GET' && (req.url === '/healthz' || req.url?.startsWith('/healthz?'))) return health(res);
    counters.requests += 1;
    const pre = preflight.preflight({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, client: remote });
    if (!pre.ok) return local(res, remote, pre.answer, true);
    if (/(?:^|\W)100-continue(?:$|\W)/i.test(req.headers.expect ?? '')) res.writeContinue();
    const received = await readLimitedBody(req, config.maxBodyBytes, limits.bodyTimeoutMs);
    if (received.kind === 'aborted') return;
    if (received.kind === 'too-large') return local(res, remote, httpRefusals.tooLarge(config.maxBodyBytes), true);
    if (received.kind === 'timeout') {
      strike(req.socket);
      return local(res, remote, httpRefusals.timedOut(), true);
    }
    // The checks the machine runs first: a body nobody can read gets the machine's own answer.
    const read = readStartBody(received.body);
    if (!read.ok) return local(res, remote, read.answer, false);
    const { request, echo } = read;
    const found = link.directory.find(request.TerminalId ?? undefined, request.UniQR ?? undefined);
    if (found.kind !== 'found') {
      const answer = declined(DeclineCodes.UnknownMachine, 'unknown machine: no machine of this fleet has this TerminalId/UniQR', echo, 200, found.kind === 'conflict' ? 'TerminalId and UniQR name different machines' : 'unknown machine');
      return local(res, remote, answer, false, 'unknown');
    }
    const { machine } = found;
    if (!machine.online) return local(res, remote, notResponding('offline', echo), false, 'offline');
    if (!machine.acceptsRelayedStart) return local(res, remote, notResponding('not-accepting', echo), false, 'not-accepting');

    const started = performance.now();
    // The relay's wall clock: the machine compares it with its own (src/start/relayed.ts).
    const deadlineAt = Date.now() + config.timeoutMs;
    counters.forwarded += 1;
    const outcome = await link.request(machine.machineId, { integratorName: pre.integratorName, body: received.body.toString('utf8'), deadlineAt, client: remote.slice(0, 64) }, config.timeoutMs);
    const ms = Math.round(performance.now() - started);
    if (outcome.kind === 'too-large') return local(res, remote, httpRefusals.tooLarge(config.maxBodyBytes), false);
    if (outcome.kind !== 'answer') {
      const answer = notResponding(outcome.kind, echo);
      slog.info({ remote, machineId: machine.machineId, txId: echo.TransactionId, outcome: outcome.kind, ...(outcome.kind === 'refused' ? { machineCode: outcome.code } : {}), ms }, 'relay answered Declined 30');
      count(outcome.kind);
      return writeAnswer(res, answer, false, limits.lingerMs);
    }
    count('machine');
    slog.info({ remote, machineId: machine.machineId, txId: echo.TransactionId, http: outcome.result.httpStatus, ...verdictOf(outcome.result), outcome: 'machine', ms }, 'relay answered with the machine\'s answer');
    writeResult(res, outcome.result);
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err: unknown) => {
      slog.error({ err: scrubbedError(err, '') }, 'relay request handling failed');
      if (!res.headersSent && !res.destroyed) writeAnswer(res, httpRefusals.internalError(), true, limits.lingerMs);
      else res.destroy();
    });
  };
  server.on('request', onRequest);
  server.on('checkContinue', onRequest);
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => writeAnswer(res, httpRefusals.expectationFailed(), true, limits.lingerMs));

  const { origin, port: boundPort } = await listen(config.listen);
  server.on('error', (err) => slog.error({ err: scrubbedError(err, '') }, 'relay server error'));
  slog.info({ origin, tls: tls !== null, broker: config.broker.url }, 'Start relay listening');

  return {
    origin,
    port: boundPort,
    counters: () => ({ ...counters, byOutcome: { ...counters.byOutcome } }),
    close,
  };
}
