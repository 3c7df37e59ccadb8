/**
 * `qrvend relay`'s HTTP(S) server: the seed's Start path for every machine of the fleet, and
 * `GET /healthz` for the load balancer. What it reuses from the machine's own endpoint, so the two
 * answer alike: the head checks and the per-source rate limit (exchange.ts's preflight), the
 * connection guard, the bounded body reader, the first body checks (a body the relay cannot read
 * gets the machine's own answer), the Declined bodies (answers.ts) and the socket handling.
 *
 * What it adds (docs/decisions/fleet-link.md, "Start relay" and its "Trust"):
 *   - the integrator's SecretToken is checked here (integrators.ts) and never forwarded: the Start
 *     crosses the broker without it, vouched for by the relay's key (voucher.ts);
 *   - the machine comes from the operator's signed registry (directory.ts, registry.ts): unknown
 *     machine: Declined 50; offline, not taking relayed Starts, too many Starts waiting for it or
 *     its breaker open (breaker.ts), broker away, overloaded, or no answer within relay.timeoutMs:
 *     Declined 30;
 *   - the machine's answer is passed on only when it conforms to the seed (answer-check.ts), else
 *     Declined 30;
 *   - an Approved answer written to the wallet is confirmed to the machine (`start.confirm`), which
 *     authorizes only then: the wallet is told Approved if and only if the machine authorizes;
 *   - per-source bounds count an IPv6 /64 as one source, and the forwarded address behind a load
 *     balancer (source.ts).
 * The SecretToken and the body are never logged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../core/log.js';
import { DeclineCodes } from '../gateway/protocol/codes.js';
import { declined, httpRefusals, type Echo, type StartAnswer } from '../start/answers.js';
import { readLimitedBody } from '../start/body.js';
import { AUTH_FAILED, readStartBody } from '../start/request-checks.js';
import { ConnectionGuard } from '../start/connection-guard.js';
import { createGuardedServer } from '../start/guarded-server.js';
import { createStartPreflight } from '../start/exchange.js';
import { readTlsFiles } from '../start/listen.js';
import { scrubbedError, writeAnswer } from '../start/respond.js';
import { DEFAULT_START_LIMITS } from '../start/server.js';
import type { RelayedStartResult } from '../fleet/contract/index.js';
import { checkAnswer } from './answer-check.js';
import { MachineBounds } from './breaker.js';
import type { BrokerLink, RequestOutcome } from './broker-link.js';
import type { RelayConfig } from './config.js';
import type { IntegratorTokens } from './integrators.js';
import type { RegistryState } from './registry-watch.js';
import { addressOf, sourceKey } from './source.js';
import type { VoucherSigner } from './voucher.js';

export interface RelayCounters {
  requests: number;
  forwarded: number;
  /**
   * Answers by what the relay did: machine (the machine's answer), unknown (50), offline /
   * not-accepting / machine-busy / breaker-open / timeout / broker-down / overloaded / refused /
   * nonconforming (30), unauthenticated (9), local (a refusal of the relay's own: rate, path, body).
   */
  byOutcome: Record<string, number>;
  /** Approved answers confirmed to their machine (start.confirm sent). */
  confirmed: number;
  /** Per-machine bounds: breakers open now, opened so far, Starts refused by the cap and by open breakers. */
  breakers?: { open: number; opened: number; refused: Record<string, number> };
}

export interface RelayServerDeps {
  link: BrokerLink;
  tokens: IntegratorTokens;
  signer: VoucherSigner;
  registry: () => RegistryState;
}

export interface RelayServer {
  /** scheme://host:port */
  origin: string;
  port: number;
  counters(): RelayCounters;
  close(): Promise<void>;
}

const MACHINE_NOT_RESPONDING = 'machine not responding';

function writeResult(res: ServerResponse, result: RelayedStartResult): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(result.httpStatus, {
    // Checked to be a JSON type (answer-check.ts); written in the one spelling the machine uses.
    'Content-Type': 'application/json; charset=utf-8',
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

type NotResponding =
  | Exclude<RequestOutcome['kind'], 'answer' | 'too-large'>
  | 'offline'
  | 'no-machine-key'
  | 'not-accepting'
  | 'machine-busy'
  | 'breaker-open'
  | 'nonconforming';

function notResponding(kind: NotResponding, echo: Echo): StartAnswer {
  const why: Record<NotResponding, string> = {
    offline: 'the machine is offline',
    'no-machine-key': 'the machine cannot be believed',
    'not-accepting': 'the machine does not take relayed Starts',
    'machine-busy': 'too many Starts are waiting for this machine; retry',
    'breaker-open': 'the machine has not answered lately; retry later',
    nonconforming: 'the machine gave no valid answer',
    timeout: 'no answer from the machine in time',
    'broker-down': 'the machine cannot be reached now',
    overloaded: 'too many Starts waiting; retry',
    refused: 'the machine could not take the Start',
  };
  return declined(DeclineCodes.MachineNotResponding, `${MACHINE_NOT_RESPONDING}: ${why[kind]}`, echo, 200, kind);
}

export async function startRelayServer(config: RelayConfig, deps: RelayServerDeps, log: Logger): Promise<RelayServer> {
  const { link, tokens, signer } = deps;
  const perSource = Math.min(config.maxConnectionsPerSource, config.maxConnections);
  // Behind a load balancer every connection comes from the balancer: the socket-level guard then
  // bounds only the total, and the per-source bound is applied to the forwarded address below.
  const limits = {
    ...DEFAULT_START_LIMITS,
    maxConnections: config.maxConnections,
    maxConnectionsPerSource: config.trustForwardedFor ? config.maxConnections : perSource,
  };
  const forwardedGuard = config.trustForwardedFor
    ? new ConnectionGuard({
        total: config.maxConnections,
        perSource,
        suspectShare: limits.suspectShare,
        suspectForMs: limits.suspectForMs,
      })
    : null;
  const bounds = new MachineBounds({
    maxInFlight: config.maxInFlightPerMachine,
    failures: config.breaker.failures,
    openMs: config.breaker.openMs,
  });
  const slog = log.child({ component: 'relay' });
  const preflight = createStartPreflight({ maxBodyBytes: config.maxBodyBytes, rateLimit: config.rateLimit });
  const counters: RelayCounters = { requests: 0, forwarded: 0, byOutcome: {}, confirmed: 0 };
  const count = (outcome: string) => (counters.byOutcome[outcome] = (counters.byOutcome[outcome] ?? 0) + 1);
  const monotonic = () => performance.now();

  const tls =
    config.certFile !== null && config.keyFile !== null ? readTlsFiles(config.certFile, config.keyFile) : null;
  const { server, strike, listen, close } = createGuardedServer({ limits, tls, sourceKey });

  function local(
    res: ServerResponse,
    remote: string,
    answer: StartAnswer,
    bodyUnread: boolean,
    outcome = 'local',
  ): void {
    count(outcome);
    const { Verdict, Code } = answer.body.Status;
    const fields = {
      remote,
      http: answer.httpStatus,
      verdict: Verdict,
      code: Code ?? undefined,
      reason: answer.reason,
      txId: answer.transactionId,
      outcome,
    };
    // A flood of refused requests must not flood the journal (the machine logs 429 at debug too).
    if (answer.httpStatus === 429) slog.debug(fields, 'relay answered');
    else slog.info(fields, 'relay answered');
    writeAnswer(res, answer, bodyUnread, limits.lingerMs);
  }

  function health(res: ServerResponse): void {
    const stats = link.stats();
    const ok = stats.connected;
    const registry = deps.registry();
    // Figures for the balancer and the operator's monitoring; which machines, keys and files are
    // involved go to the `relay stats` log line only (this answer may be reachable from outside).
    const payload = JSON.stringify({
      ok,
      broker: stats.connected ? 'connected' : 'disconnected',
      machines: stats.machines,
      online: stats.online,
      inFlight: stats.inFlight,
      registry: {
        machines: registry.machines,
        expiresAt: registry.expiresAt,
        expired: registry.expired,
        reloadFailures: registry.reloadFailures,
        withoutKey: registry.withoutKey,
      },
      // Statuses and replies not signed by their machine's registry key, per reason (docs/relay.md).
      refused: { status: stats.statusRefused, replies: stats.repliesRefused },
      // Raised for the operator: machines claiming another machine's identifiers (docs/decisions/fleet-trust.md item
      // 6).
      claims: { ...link.directory.claims },
      breakers: breakerStats(),
    });
    res.writeHead(ok ? 200 : 503, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(payload),
      'Cache-Control': 'no-store',
    });
    res.end(payload);
  }

  const breakerStats = () => ({
    open: bounds.openCount(monotonic()),
    opened: bounds.opened,
    refused: { ...bounds.refused },
  });

  /** After the Approved answer is handed to the wallet's socket: the machine may authorize. */
  function confirmAfterWrite(res: ServerResponse, machineId: string, txId: string, startNonce: string): void {
    const started = monotonic();
    res.once('finish', () => {
      counters.confirmed += 1;
      link.confirm(machineId, signer.confirm(machineId, txId, startNonce, Date.now()));
      slog.debug({ machineId, txId, ms: Math.round(monotonic() - started) }, 'relayed Start confirmed to the machine');
    });
  }

  async function forward(
    res: ServerResponse,
    remote: string,
    key: string,
    integratorName: string,
    body: string,
    echo: Echo,
    machineId: string,
  ): Promise<void> {
    const admitted = bounds.admit(machineId, monotonic());
    if (!admitted.admit) return local(res, remote, notResponding(admitted.reason, echo), false, admitted.reason);
    const started = monotonic();
    const args = signer.start(
      machineId,
      { integratorName, body, client: key.slice(0, 64) },
      config.timeoutMs,
      Date.now(),
    );
    counters.forwarded += 1;
    // Never rejects: every end of the wait is an outcome.
    const outcome = await link.request(machineId, args, config.timeoutMs);
    // 'refused' is the machine speaking; a broker away or an overload say nothing about the machine.
    bounds.release(
      machineId,
      outcome.kind === 'answer' || outcome.kind === 'refused'
        ? 'answered'
        : outcome.kind === 'timeout'
          ? 'silent'
          : 'neutral',
      monotonic(),
    );
    const ms = Math.round(monotonic() - started);
    if (outcome.kind === 'too-large') return local(res, remote, httpRefusals.tooLarge(config.maxBodyBytes), false);
    const checked = outcome.kind === 'answer' ? checkAnswer(outcome.result, echo.TransactionId) : null;
    if (outcome.kind !== 'answer' || checked === null || !checked.ok) {
      const kind = outcome.kind === 'answer' ? 'nonconforming' : outcome.kind;
      const fields = {
        remote,
        machineId,
        txId: echo.TransactionId,
        outcome: kind,
        ...(outcome.kind === 'refused' ? { machineCode: outcome.code } : {}),
        ...(checked !== null && !checked.ok ? { why: checked.why } : {}),
        ms,
      };
      if (kind === 'nonconforming')
        slog.warn(fields, "relay answered Declined 30: the machine's answer does not conform to the seed");
      else slog.info(fields, 'relay answered Declined 30');
      count(kind);
      return writeAnswer(res, notResponding(kind, echo), false, limits.lingerMs);
    }
    count('machine');
    slog.info(
      {
        remote,
        machineId,
        txId: echo.TransactionId,
        http: outcome.result.httpStatus,
        ...verdictOf(outcome.result),
        outcome: 'machine',
        ms,
      },
      "relay answered with the machine's answer",
    );
    if (checked.approved && echo.TransactionId !== undefined)
      confirmAfterWrite(res, machineId, echo.TransactionId, args.voucher.nonce);
    writeResult(res, outcome.result);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const remote = addressOf(req, config.trustForwardedFor);
    const key = sourceKey(remote);
    if (req.method === 'GET' && (req.url === '/healthz' || req.url?.startsWith('/healthz?'))) return health(res);
    counters.requests += 1;
    if (forwardedGuard !== null) {
      const admitted = forwardedGuard.admit(key, monotonic());
      if (!admitted.admit) return local(res, remote, httpRefusals.rateLimited(1_000), true, 'source-cap');
      res.once('close', () => forwardedGuard.release(key, monotonic()));
    }
    const pre = preflight.preflight({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      client: key,
    });
    if (!pre.ok) return local(res, remote, pre.answer, true);
    if (/(?:^|\W)100-continue(?:$|\W)/i.test(req.headers.expect ?? '')) res.writeContinue();
    const received = await readLimitedBody(req, config.maxBodyBytes, limits.bodyTimeoutMs);
    if (received.kind === 'aborted') return;
    if (received.kind === 'too-large') return local(res, remote, httpRefusals.tooLarge(config.maxBodyBytes), true);
    if (received.kind === 'timeout') {
      strike(req.socket);
      return local(res, remote, httpRefusals.timedOut(), true);
    }
    // The checks the machine runs first, in its order: a body nobody can read, then the integrator.
    const read = readStartBody(received.body);
    if (!read.ok) return local(res, remote, read.answer, false);
    const { request, echo, presented, value } = read;
    if (!tokens.authenticates(pre.integratorName, presented)) {
      return local(
        res,
        remote,
        declined(DeclineCodes.NotAllowed, AUTH_FAILED, echo, 200, 'integrator not authenticated at the relay'),
        false,
        'unauthenticated',
      );
    }
    const found = link.directory.find(request.TerminalId ?? undefined, request.UniQR ?? undefined);
    if (found.kind !== 'found') {
      const answer = declined(
        DeclineCodes.UnknownMachine,
        'unknown machine: no machine of this fleet has this TerminalId/UniQR',
        echo,
        200,
        found.kind === 'conflict' ? 'TerminalId and UniQR name different machines' : 'unknown machine',
      );
      return local(res, remote, answer, false, 'unknown');
    }
    const { machine } = found;
    // No key in the registry: neither its status nor its answer could be told from a forgery.
    if (machine.keyless === true)
      return local(res, remote, notResponding('no-machine-key', echo), false, 'no-machine-key');
    if (!machine.online) return local(res, remote, notResponding('offline', echo), false, 'offline');
    if (!machine.acceptsRelayedStart)
      return local(res, remote, notResponding('not-accepting', echo), false, 'not-accepting');
    // The body crosses the broker without its SecretToken (the machine takes the relay's voucher instead).
    const { SecretToken: _token, ...withoutToken } = value;
    await forward(res, remote, key, pre.integratorName, JSON.stringify(withoutToken), echo, machine.machineId);
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
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) =>
    writeAnswer(res, httpRefusals.expectationFailed(), true, limits.lingerMs),
  );

  const { origin, port: boundPort } = await listen(config.listen);
  server.on('error', (err) => slog.error({ err: scrubbedError(err, '') }, 'relay server error'));
  slog.info(
    {
      origin,
      tls: tls !== null,
      broker: config.broker.url,
      integrators: tokens.names.length,
      voucherKeyId: signer.keyId,
    },
    'Start relay listening',
  );

  return {
    origin,
    port: boundPort,
    counters: () => ({ ...counters, byOutcome: { ...counters.byOutcome }, breakers: breakerStats() }),
    close,
  };
}
