/**
 * `qrvend relay`'s own configuration file (`--config FILE`): every key under `relay.`, checked
 * with zod, strict (an unknown key is refused), each problem reported with its key path; the CLI
 * exits 78. Defaults are in the schema, so a small file is enough (config/relay.example.json).
 */
import { z } from 'zod';
import { AbsolutePath, isLoopbackHost, ListenAddress } from '../config/schema.js';
import { problemsOf, readJsonFile } from '../config/load.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { LOG_LEVELS } from '../core/log.js';
import { TOPIC_PREFIX } from '../fleet/contract/topics.js';
import { KEY_ID } from '../trust/keys.js';

const int = (min: number, max: number) => z.number().int().min(min).max(max);

const BrokerConfig = z.strictObject({
  /** mqtts:// (TLS) or mqtt://; wss:// and ws:// for brokers behind a web load balancer. */
  url: z
    .url({
      protocol: /^(mqtts?|wss?)$/,
      error: 'must be an mqtt://, mqtts://, ws:// or wss:// URL, e.g. mqtts://broker.example.com:8883',
    })
    // The URL is logged; credentials belong in username and passwordFile.
    .refine(
      (u) => !/^[a-z]+:\/\/[^/]*@/i.test(u),
      'must not carry a user name or password: use relay.broker.username and relay.broker.passwordFile',
    ),
  /** The fleet's topic prefix (the machines' fleet.topicPrefix). */
  topicPrefix: z.string().regex(TOPIC_PREFIX, 'levels of letters, digits and . _ : - separated by /').default('qrvend'),
  /** 5 = MQTT 5 (response topic, correlation data, message expiry); 4 = MQTT 3.1.1. */
  protocolVersion: z.union([z.literal(4), z.literal(5)]).default(5),
  /** MQTT client id; null = qrvend-relay-<random> (each replica must have its own). */
  clientId: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,64}$/, '1..64 letters, digits or . _ : -')
    .nullable()
    .default(null),
  caFile: AbsolutePath.nullable().default(null),
  certFile: AbsolutePath.nullable().default(null),
  keyFile: AbsolutePath.nullable().default(null),
  username: z.string().min(1).max(256).nullable().default(null),
  /** File holding the broker password (never the password itself in this file). */
  passwordFile: AbsolutePath.nullable().default(null),
  connectTimeoutMs: int(500, 60_000).default(5_000),
  keepaliveS: int(5, 600).default(30),
});

export const RelayConfigSchema = z.strictObject({
  relay: z
    .strictObject({
      /** host:port the relay serves the Start path on. */
      listen: ListenAddress,
      /** PEM certificate and key: the relay serves HTTPS itself. Both null: plain HTTP (see allowPlainHttp). */
      certFile: AbsolutePath.nullable().default(null),
      keyFile: AbsolutePath.nullable().default(null),
      /**
       * Plain HTTP on a non-loopback address, for a TLS-terminating load balancer in front. Off by
       * default: a SecretToken must never cross a network in clear text by accident.
       */
      allowPlainHttp: z.boolean().default(false),
      /**
       * The wallet's address for the rate limit and the per-source connection bound comes from the
       * last X-Forwarded-For entry (set by the load balancer). Only behind a load balancer that sets
       * it: a client could forge it otherwise.
       */
      trustForwardedFor: z.boolean().default(false),
      broker: BrokerConfig,
      /** How long the relay waits for the machine's answer before Declined 30. */
      timeoutMs: int(2_000, 30_000).default(5_000),
      /** At most 30,000: the body travels JSON-escaped in one fleet message, which devices bound to 64 KiB. */
      maxBodyBytes: int(512, 30_000).default(16_384),
      /** Per-source token bucket, like start.rateLimit on the machine. */
      rateLimit: z
        .strictObject({ perSecond: int(1, 10_000), burst: int(1, 100_000) })
        .default({ perSecond: 20, burst: 40 }),
      maxConnections: int(8, 100_000).default(1_024),
      maxConnectionsPerSource: int(1, 10_000).default(64),
      /** Machines the relay keeps in its map from the retained status; more are refused (counted, logged). */
      maxMachines: int(1, 1_000_000).default(100_000),
      /** Starts waiting for a machine at once; beyond that a Start is answered Declined 30 at once. */
      maxInFlight: int(1, 100_000).default(2_000),
      /**
       * Starts waiting for one machine at once (a machine takes one at a time; the rest are for
       * wallets retrying): a flood aimed at one machine cannot take the slots of the others.
       */
      maxInFlightPerMachine: int(1, 1_000).default(8),
      /**
       * A machine that leaves `failures` Starts in a row unanswered is not asked for `openMs`: its
       * Starts are answered Declined 30 at once; then one Start tries it again.
       */
      breaker: z
        .strictObject({ failures: int(1, 100), openMs: int(1_000, 600_000) })
        .default({ failures: 3, openMs: 15_000 }),
      /**
       * Which machine owns which TerminalId and UniQR: the operator's registry, signed with a key of
       * scope `registry` (`qrvend relay registry sign`), re-read when it changes and on SIGHUP.
       */
      registryFile: AbsolutePath,
      /** The operator's trust file (src/trust/keys.ts) holding the registry's signing keys (scope `registry`). */
      trustFile: AbsolutePath,
      /**
       * The relay's own directory (systemd's StateDirectory=qrvend-relay): the newest registry it
       * verified is kept there (`registry.version.json`), so an older file is refused at start too.
       */
      stateDir: AbsolutePath.default('/var/lib/qrvend-relay'),
      /**
       * The relay's own Ed25519 key (PKCS#8 PEM, `qrvend fleet keygen`): it vouches for every Start it
       * forwards. The machines trust its public key with the scope `start` (fleet.trustFile).
       */
      voucherKey: z.strictObject({
        file: AbsolutePath,
        keyId: z.string().regex(KEY_ID, 'letters, digits and . _ : - only, 1 to 64'),
      }),
      /**
       * The integrators whose Starts the relay takes, each with its SecretToken file: the relay checks
       * the token (in constant time) and never forwards it.
       */
      integrators: z
        .array(z.strictObject({ name: z.string().min(1).max(100), secretTokenFile: AbsolutePath }))
        .min(1)
        .max(100)
        .refine((list) => new Set(list.map((i) => i.name)).size === list.length, 'each integrator name once'),
      logLevel: z.enum(LOG_LEVELS).default('info'),
    })
    .superRefine((cfg, ctx) => {
      if ((cfg.certFile === null) !== (cfg.keyFile === null)) {
        ctx.addIssue({ code: 'custom', path: ['keyFile'], message: 'relay.certFile and relay.keyFile go together' });
      }
      const host = /^(\[[^\]]+\]|[^:]+):/.exec(cfg.listen)?.[1] ?? '';
      if (cfg.certFile === null && !cfg.allowPlainHttp && !isLoopbackHost(host)) {
        ctx.addIssue({
          code: 'custom',
          path: ['listen'],
          message:
            'plain HTTP off loopback: set relay.certFile and relay.keyFile, or relay.allowPlainHttp: true behind a ' +
            'TLS-terminating load balancer',
        });
      }
      if ((cfg.broker.certFile === null) !== (cfg.broker.keyFile === null)) {
        ctx.addIssue({
          code: 'custom',
          path: ['broker', 'keyFile'],
          message: 'relay.broker.certFile and relay.broker.keyFile go together',
        });
      }
      if ((cfg.broker.username === null) !== (cfg.broker.passwordFile === null)) {
        ctx.addIssue({
          code: 'custom',
          path: ['broker', 'passwordFile'],
          message: 'relay.broker.username and relay.broker.passwordFile go together',
        });
      }
    }),
});

export type RelayConfig = z.infer<typeof RelayConfigSchema>['relay'];

export function validateRelayConfig(value: unknown, source: string): RelayConfig {
  const parsed = RelayConfigSchema.safeParse(value);
  if (parsed.success) return parsed.data.relay;
  const problems = problemsOf(parsed.error);
  const lines = problems.map((p) => `  ${p.path}: ${p.reason}`).join('\n');
  throw new QrvendError(ErrorCodes.CONFIG_INVALID, `relay configuration ${source} is invalid:\n${lines}`, {
    hint: 'fix the keys listed above; see config/relay.example.json and docs/relay.md',
    details: { problems },
  });
}

export function loadRelayConfig(file: string): RelayConfig {
  return validateRelayConfig(readJsonFile(file, 'relay configuration file'), file);
}
