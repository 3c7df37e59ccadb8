/** The gateway client and the Start endpoint (docs/configuration.md, docs/payments.md). */
import { z } from 'zod';
import { int, nonEmpty, AbsolutePath, ListenAddress } from './primitives.js';

export const GatewaySection = z.strictObject({
  /** https:// (http:// only to a loopback address: a simulator or a local TLS proxy). */
  baseUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. https://gw.example.com:443' }),
  /** Whole-request deadline for one gateway call. */
  timeoutMs: int(100, 120_000),
  /** TCP (and TLS) connect deadline. */
  connectTimeoutMs: int(50, 60_000),
  /** Extra CA bundle (PEM) for a private gateway certificate; null = system CAs. */
  caFile: AbsolutePath.nullable(),
});

export const StartSection = z.strictObject({
  /**
   * host:port of the Start endpoint; null = no inbound port (Starts come through `qrvend relay` only, docs/relay.md).
   */
  listen: ListenAddress.nullable(),
  integratorName: nonEmpty(100).regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, dot, dash, underscore only'),
  /** File holding the 64-character SecretToken (never put the token itself in config). */
  secretTokenFile: AbsolutePath,
  /** PEM certificate and key for HTTPS; both null = plain HTTP (loopback, or behind a TLS proxy). */
  certFile: AbsolutePath.nullable(),
  keyFile: AbsolutePath.nullable(),
  /**
   * The site says a TLS proxy terminates HTTPS in front of this machine: plain HTTP on a
   * non-loopback `listen` is then allowed. A site-file setting only: never settable by the fleet.
   */
  behindTlsProxy: z.boolean(),
  maxBodyBytes: int(512, 1_048_576),
  /** Per-client token bucket: sustained requests per second and burst. */
  rateLimit: z.strictObject({ perSecond: int(1, 10_000), burst: int(1, 100_000) }),
  /** Connections one source address may hold at once (slow-header senders cannot take them all). */
  maxConnectionsPerSource: int(1, 64),
});
