/**
 * `qrvend console` configuration (docs/console.md): a JSON file (`-c console.json`) and flags
 * over it, checked with zod, every number within a range; a refusal names each bad key.
 */
import { readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { z } from 'zod';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { isAllowedFleetUrl, startEndpointTransport, type StartTransport } from '../config/schema.js';
import { FleetConnectionOptions } from '../fleet/operator/connection.js';
import { TOPIC_LEVEL } from '../fleet/contract/index.js';
import { BATCH_RANGES, DEFAULT_BATCH } from './ingest/batch.js';
import { EmailSettings } from './deliveries/email.js';
import { hostTimeZone, isTimeZone } from './time-zone.js';

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const ListenAddress = z
  .string()
  .max(300)
  .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be HOST:PORT (an IPv6 host in brackets)');

function defaultInstance(): string {
  return `console-${
    hostname()
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .slice(0, 40) || 'host'
  }`;
}

export const ConsoleConfig = z.strictObject({
  broker: FleetConnectionOptions.refine((b) => isAllowedFleetUrl(b.url), {
    message: 'plain mqtt:// only to a loopback broker: use mqtts:// (TLS) for a broker on another host',
    path: ['url'],
  }),
  /** The shared-subscription group: every instance of one console joins the same. */
  group: z.string().regex(TOPIC_LEVEL, 'letters, digits and ._:-').default('qrvend-console'),
  /** 'plain' only for a broker without shared subscriptions, and then with one instance. */
  subscription: z.enum(['shared', 'plain']).default('shared'),
  /** This instance's persistent session on the broker: unique per instance, stable across restarts. */
  instance: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, '1-64 letters, digits or ._-')
    .default(defaultInstance),
  /**
   * A SQLite file path (the embedded default) or postgres://USER@HOST:PORT/DB (password from
   * PGPASSWORD or ~/.pgpass).
   */
  db: z.string().min(1).max(4096).default('./console.sqlite'),
  listen: ListenAddress.default('127.0.0.1:8480'),
  certFile: z.string().min(1).max(4096).nullable().default(null),
  keyFile: z.string().min(1).max(4096).nullable().default(null),
  /** A TLS proxy of the site terminates HTTPS in front (plain HTTP off loopback is refused otherwise). */
  behindTlsProxy: z.boolean().default(false),
  sessionHours: int(1, 720).default(12),
  /** The zone the pages show times in for an account that names none (docs/console.md, "Accounts"). */
  timeZone: z.string().refine(isTimeZone, 'an IANA time zone, such as Europe/Berlin or UTC').default(hostTimeZone),
  login: z
    .strictObject({
      /** Failed logins allowed per address and per account within the window. */
      failures: int(1, 1000).default(10),
      windowS: int(60, 86_400).default(900),
    })
    .default({ failures: 10, windowS: 900 }),
  pageSize: int(10, 1000).default(100),
  reconnectMs: int(100, 60_000).default(1000),
  /** Group commit (docs/console.md, "Ingest"): keep `batchEvents` within the broker's in-flight window. */
  ingest: z
    .strictObject({
      batchEvents: int(BATCH_RANGES.events.min, BATCH_RANGES.events.max).default(DEFAULT_BATCH.events),
      batchMs: int(BATCH_RANGES.ms.min, BATCH_RANGES.ms.max).default(DEFAULT_BATCH.ms),
    })
    .default({ batchEvents: DEFAULT_BATCH.events, batchMs: DEFAULT_BATCH.ms }),
  /** The console's address as operators reach it (https://console.example.com): links in e-mail. */
  publicUrl: z
    .string()
    .max(300)
    .regex(/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/, 'an http(s) URL without query')
    .transform((u) => u.replace(/\/+$/, ''))
    .nullable()
    .default(null),
  /** The operator's SMTP server for alert e-mail (docs/console.md "E-mail"); null: no e-mail. */
  email: EmailSettings.nullable().default(null),
  webhooks: z
    .strictObject({
      /** Receivers inside private networks (RFC 1918, unique-local, CGNAT): refused unless true (docs/security.md). */
      allowPrivateNetworks: z.boolean().default(false),
      /** A CA for receivers with certificates of the site's own (PEM), or null for the system's. */
      caFile: z.string().min(1).max(4096).nullable().default(null),
      timeoutS: int(1, 60).default(15),
    })
    .default({ allowPrivateNetworks: false, caFile: null, timeoutS: 15 }),
  deliveries: z
    .strictObject({ pollMs: int(50, 60_000).default(500), concurrency: int(1, 64).default(4) })
    .default({ pollMs: 500, concurrency: 4 }),
  alerts: z.strictObject({ everyS: int(5, 3600).default(30) }).default({ everyS: 30 }),
  api: z
    .strictObject({
      /** Requests per API token per minute, counted across instances. */
      requestsPerMinute: int(1, 100_000).default(600),
    })
    .default({ requestsPerMinute: 600 }),
});
export type ConsoleConfigInput = z.input<typeof ConsoleConfig>;
export type ConsoleSettings = z.output<typeof ConsoleConfig>;

const MAX_CONFIG_BYTES = 64 * 1024;

export function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    if (statSync(path).size > MAX_CONFIG_BYTES) throw new Error(`larger than ${MAX_CONFIG_BYTES} bytes`);
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.CONFIG_UNREADABLE,
      `console configuration ${path} cannot be read: ${(err as Error).message}`,
    );
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
    return value as Record<string, unknown>;
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.CONFIG_INVALID,
      `console configuration ${path} is not a JSON object: ${(err as Error).message}`,
    );
  }
}

/**
 * How a browser reaches the console. Behind the site's TLS proxy the browser is on HTTPS even
 * when the console listens on loopback (the proxy on the same host): its cookies must then be
 * Secure, so the proxy is looked at before the loopback address is.
 */
export function consoleTransport(s: Pick<ConsoleSettings, 'listen' | 'certFile' | 'behindTlsProxy'>): StartTransport {
  if (s.certFile === null && s.behindTlsProxy) return 'tls-proxy';
  return startEndpointTransport({ listen: s.listen, certFile: s.certFile, behindTlsProxy: s.behindTlsProxy });
}

/** Checks a configuration; throws CONFIG_INVALID naming each bad key. */
export function parseConsoleConfig(input: unknown): ConsoleSettings & { transport: StartTransport } {
  const parsed = ConsoleConfig.safeParse(input);
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ');
    throw new QrvendError(ErrorCodes.CONFIG_INVALID, `console configuration refused: ${reasons}`, {
      hint: 'see docs/console.md for every key and its range',
    });
  }
  const s = parsed.data;
  if ((s.certFile === null) !== (s.keyFile === null)) {
    throw new QrvendError(
      ErrorCodes.CONFIG_INVALID,
      'console configuration refused: certFile and keyFile go together (HTTPS)',
    );
  }
  const transport = consoleTransport(s);
  if (transport === 'refused') {
    throw new QrvendError(
      ErrorCodes.CONSOLE_LISTEN_REFUSED,
      `listen ${s.listen} is not a loopback address and certFile is null: ` +
        'passwords and sessions would cross the network in plain HTTP',
      {
        hint:
          'set certFile and keyFile (HTTPS), listen on 127.0.0.1, ' +
          'or set behindTlsProxy when a TLS proxy terminates HTTPS in front',
      },
    );
  }
  return { ...s, transport };
}
