/**
 * What `qrvend relay`'s server does with each request (server.ts wires it to the listening
 * server): `GET /healthz`, the machine's own first checks, the integrator's SecretToken, the
 * machine from the signed registry, its bounds and breaker, the Start across the broker and the
 * machine's answer passed on (docs/relay.md; docs/decisions/fleet-link.md, "Start relay").
 * The SecretToken and the body are never logged.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../core/log.js';
import { DeclineCodes } from '../gateway/protocol/codes.js';
import { answerLogFields, declined, httpRefusals, type Echo, type StartAnswer } from '../start/answers.js';
import { readLimitedBody } from '../start/body.js';
import { AUTH_FAILED, readStartBody } from '../start/request-checks.js';
import { ConnectionGuard } from '../start/connection-guard.js';
import { createStartPreflight } from '../start/exchange.js';
import { scrubbedError, writeAnswer } from '../start/respond.js';
import type { StartServerLimits } from '../start/server-limits.js';
import { checkAnswer } from './answer-check.js';
import { notResponding, verdictOf, writeResult } from './answers.js';
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

/** Where a request stands once its body is read: who sent it and for which integrator. */
interface Sender {
  remote: string;
  key: string;
  integratorName: string;
}

/** The state the server's request handling keeps between requests: bounds, breakers and counters. */
export class RelayRequests {
  private readonly forwardedGuard: ConnectionGuard | null;
  private readonly bounds: MachineBounds;
  private readonly preflight: ReturnType<typeof createStartPreflight>;
  private readonly counters: RelayCounters = { requests: 0, forwarded: 0, byOutcome: {}, confirmed: 0 };
  private strike: (socket: Socket) => void = () => {};

  constructor(
    private readonly config: RelayConfig,
    private readonly deps: RelayServerDeps,
    private readonly limits: StartServerLimits,
    private readonly slog: Logger,
  ) {
    // Behind a load balancer the per-source bound is applied to the forwarded address (server.ts).
    this.forwardedGuard = config.trustForwardedFor
      ? new ConnectionGuard({
          total: config.maxConnections,
          perSource: Math.min(config.maxConnectionsPerSource, config.maxConnections),
          suspectShare: limits.suspectShare,
          suspectForMs: limits.suspectForMs,
        })
      : null;
    this.bounds = new MachineBounds({
      maxInFlight: config.maxInFlightPerMachine,
      failures: config.breaker.failures,
      openMs: config.breaker.openMs,
    });
    this.preflight = createStartPreflight({ maxBodyBytes: config.maxBodyBytes, rateLimit: config.rateLimit });
  }

  /** Takes the server's requests; `strike` marks a socket that let its body time out. */
  serve(server: Server, strike: (socket: Socket) => void): void {
    this.strike = strike;
    const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
      this.handle(req, res).catch((err: unknown) => {
        this.slog.error({ err: scrubbedError(err, '') }, 'relay request handling failed');
        if (!res.headersSent && !res.destroyed)
          writeAnswer(res, httpRefusals.internalError(), true, this.limits.lingerMs);
        else res.destroy();
      });
    };
    server.on('request', onRequest);
    server.on('checkContinue', onRequest);
    server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) =>
      writeAnswer(res, httpRefusals.expectationFailed(), true, this.limits.lingerMs),
    );
  }

  snapshot(): RelayCounters {
    const counters = this.counters;
    return { ...counters, byOutcome: { ...counters.byOutcome }, breakers: this.breakerStats() };
  }

  private count(outcome: string): number {
    return (this.counters.byOutcome[outcome] = (this.counters.byOutcome[outcome] ?? 0) + 1);
  }

  private breakerStats() {
    return {
      open: this.bounds.openCount(performance.now()),
      opened: this.bounds.opened,
      refused: { ...this.bounds.refused },
    };
  }

  private local(res: ServerResponse, remote: string, answer: StartAnswer, bodyUnread: boolean, outcome = 'local') {
    this.count(outcome);
    const fields = { ...answerLogFields(remote, answer), outcome };
    // A flood of refused requests must not flood the journal (the machine logs 429 at debug too).
    if (answer.httpStatus === 429) this.slog.debug(fields, 'relay answered');
    else this.slog.info(fields, 'relay answered');
    writeAnswer(res, answer, bodyUnread, this.limits.lingerMs);
  }

  private health(res: ServerResponse): void {
    const { link } = this.deps;
    const stats = link.stats();
    const ok = stats.connected;
    const registry = this.deps.registry();
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
      breakers: this.breakerStats(),
    });
    res.writeHead(ok ? 200 : 503, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(payload),
      'Cache-Control': 'no-store',
    });
    res.end(payload);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const config = this.config;
    const remote = addressOf(req, config.trustForwardedFor);
    const key = sourceKey(remote);
    if (req.method === 'GET' && (req.url === '/healthz' || req.url?.startsWith('/healthz?'))) return this.health(res);
    this.counters.requests += 1;
    const forwardedGuard = this.forwardedGuard;
    if (forwardedGuard !== null) {
      const admitted = forwardedGuard.admit(key, performance.now());
      if (!admitted.admit) return this.local(res, remote, httpRefusals.rateLimited(1_000), true, 'source-cap');
      res.once('close', () => forwardedGuard.release(key, performance.now()));
    }
    const pre = this.preflight.preflight({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      client: key,
    });
    if (!pre.ok) return this.local(res, remote, pre.answer, true);
    if (/(?:^|\W)100-continue(?:$|\W)/i.test(req.headers.expect ?? '')) res.writeContinue();
    const received = await readLimitedBody(req, config.maxBodyBytes, this.limits.bodyTimeoutMs);
    if (received.kind === 'aborted') return;
    if (received.kind === 'too-large') return this.local(res, remote, httpRefusals.tooLarge(config.maxBodyBytes), true);
    if (received.kind === 'timeout') {
      this.strike(req.socket);
      return this.local(res, remote, httpRefusals.timedOut(), true);
    }
    await this.judge(res, { remote, key, integratorName: pre.integratorName }, received.body);
  }

  /** The checks the machine runs first, in its order: a body nobody can read, then the integrator. */
  private async judge(res: ServerResponse, sender: Sender, received: Buffer): Promise<void> {
    const { remote } = sender;
    const read = readStartBody(received);
    if (!read.ok) return this.local(res, remote, read.answer, false);
    const { request, echo, presented, value } = read;
    if (!this.deps.tokens.authenticates(sender.integratorName, presented)) {
      return this.local(
        res,
        remote,
        declined(DeclineCodes.NotAllowed, AUTH_FAILED, echo, 200, 'integrator not authenticated at the relay'),
        false,
        'unauthenticated',
      );
    }
    const found = this.deps.link.directory.find(request.TerminalId ?? undefined, request.UniQR ?? undefined);
    if (found.kind !== 'found') {
      const answer = declined(
        DeclineCodes.UnknownMachine,
        'unknown machine: no machine of this fleet has this TerminalId/UniQR',
        echo,
        200,
        found.kind === 'conflict' ? 'TerminalId and UniQR name different machines' : 'unknown machine',
      );
      return this.local(res, remote, answer, false, 'unknown');
    }
    const { machine } = found;
    // No key in the registry: neither its status nor its answer could be told from a forgery.
    if (machine.keyless === true)
      return this.local(res, remote, notResponding('no-machine-key', echo), false, 'no-machine-key');
    if (!machine.online) return this.local(res, remote, notResponding('offline', echo), false, 'offline');
    if (!machine.acceptsRelayedStart)
      return this.local(res, remote, notResponding('not-accepting', echo), false, 'not-accepting');
    // The body crosses the broker without its SecretToken (the machine takes the relay's voucher instead).
    const { SecretToken: _token, ...withoutToken } = value;
    await this.forward(res, sender, JSON.stringify(withoutToken), echo, machine.machineId);
  }

  private async forward(res: ServerResponse, sender: Sender, body: string, echo: Echo, machineId: string) {
    const { config, deps, bounds } = this;
    const admitted = bounds.admit(machineId, performance.now());
    if (!admitted.admit)
      return this.local(res, sender.remote, notResponding(admitted.reason, echo), false, admitted.reason);
    const started = performance.now();
    const args = deps.signer.start(
      machineId,
      { integratorName: sender.integratorName, body, client: sender.key.slice(0, 64) },
      config.timeoutMs,
      Date.now(),
    );
    this.counters.forwarded += 1;
    // Never rejects: every end of the wait is an outcome.
    const outcome = await deps.link.request(machineId, args, config.timeoutMs);
    // 'refused' is the machine speaking; a broker away or an overload say nothing about the machine.
    bounds.release(
      machineId,
      outcome.kind === 'answer' || outcome.kind === 'refused'
        ? 'answered'
        : outcome.kind === 'timeout'
          ? 'silent'
          : 'neutral',
      performance.now(),
    );
    const ms = Math.round(performance.now() - started);
    this.passOn(res, sender.remote, { machineId, echo, startNonce: args.voucher.nonce, ms }, outcome);
  }

  /** The machine's answer to the wallet when it conforms to the seed (answer-check.ts), else Declined 30. */
  private passOn(
    res: ServerResponse,
    remote: string,
    start: { machineId: string; echo: Echo; startNonce: string; ms: number },
    outcome: RequestOutcome,
  ): void {
    const { machineId, echo, ms } = start;
    if (outcome.kind === 'too-large')
      return this.local(res, remote, httpRefusals.tooLarge(this.config.maxBodyBytes), false);
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
        this.slog.warn(fields, "relay answered Declined 30: the machine's answer does not conform to the seed");
      else this.slog.info(fields, 'relay answered Declined 30');
      this.count(kind);
      return writeAnswer(res, notResponding(kind, echo), false, this.limits.lingerMs);
    }
    this.count('machine');
    this.slog.info(
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
      this.confirmAfterWrite(res, machineId, echo.TransactionId, start.startNonce);
    writeResult(res, outcome.result);
  }

  /** After the Approved answer is handed to the wallet's socket: the machine may authorize. */
  private confirmAfterWrite(res: ServerResponse, machineId: string, txId: string, startNonce: string): void {
    const started = performance.now();
    res.once('finish', () => {
      this.counters.confirmed += 1;
      this.deps.link.confirm(machineId, this.deps.signer.confirm(machineId, txId, startNonce, Date.now()));
      this.slog.debug(
        { machineId, txId, ms: Math.round(performance.now() - started) },
        'relayed Start confirmed to the machine',
      );
    });
  }
}
