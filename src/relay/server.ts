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
import type { Logger } from '../core/log.js';
import { createGuardedServer } from '../start/guarded-server.js';
import { readTlsFiles } from '../start/listen.js';
import { scrubbedError } from '../start/respond.js';
import { DEFAULT_START_LIMITS } from '../start/server.js';
import type { StartServerLimits } from '../start/server-limits.js';
import type { RelayConfig } from './config.js';
import { RelayRequests, type RelayCounters, type RelayServerDeps } from './requests.js';
import { sourceKey } from './source.js';

export type { RelayCounters, RelayServerDeps } from './requests.js';

export interface RelayServer {
  /** scheme://host:port */
  origin: string;
  port: number;
  counters(): RelayCounters;
  close(): Promise<void>;
}

function relayLimits(config: RelayConfig): StartServerLimits {
  const perSource = Math.min(config.maxConnectionsPerSource, config.maxConnections);
  // Behind a load balancer every connection comes from the balancer: the socket-level guard then
  // bounds only the total, and the per-source bound is applied to the forwarded address (requests.ts).
  return {
    ...DEFAULT_START_LIMITS,
    maxConnections: config.maxConnections,
    maxConnectionsPerSource: config.trustForwardedFor ? config.maxConnections : perSource,
  };
}

export async function startRelayServer(config: RelayConfig, deps: RelayServerDeps, log: Logger): Promise<RelayServer> {
  const { tokens, signer } = deps;
  const limits = relayLimits(config);
  const slog = log.child({ component: 'relay' });
  const requests = new RelayRequests(config, deps, limits, slog);

  const tls =
    config.certFile !== null && config.keyFile !== null ? readTlsFiles(config.certFile, config.keyFile) : null;
  const { server, strike, listen, close } = createGuardedServer({ limits, tls, sourceKey });
  requests.serve(server, strike);

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
    counters: () => requests.snapshot(),
    close,
  };
}
