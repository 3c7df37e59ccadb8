/**
 * How the operator side (`qrvend fleet ...`, the fleet simulation) reaches the broker: options
 * checked with zod, files read with a size bound, and a connect that turns the broker's answer
 * into a QrvendError naming the broker (never the password).
 *
 * A password is only ever read from a file: a password in the URL (`mqtt://user:pw@host`) would
 * show in `ps`, in shell history and in error messages, so it is refused.
 */
import { readFileSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { TOPIC_PREFIX } from '../contract/index.js';
import { setNoDelayOn } from '../no-delay.js';
import { boundInboundPackets, maxPacketProperties } from '../packet-bound.js';

export const FleetConnectionOptions = z.strictObject({
  /** mqtt://host:port or mqtts://host:port (TLS). */
  url: z
    .string()
    .max(512)
    .refine((u) => /^mqtts?:\/\/[^\s/]+(:\d{1,5})?\/?$/.test(u), 'must be mqtt://HOST[:PORT] or mqtts://HOST[:PORT]')
    .refine((u) => !/^mqtts?:\/\/[^/@]*:[^/@]*@/.test(u), 'must not carry a password: use --password-file'),
  prefix: z.string().regex(TOPIC_PREFIX, 'topic levels of letters, digits and ._:-').default('qrvend'),
  caFile: z.string().min(1).max(4096).optional(),
  certFile: z.string().min(1).max(4096).optional(),
  keyFile: z.string().min(1).max(4096).optional(),
  username: z.string().min(1).max(256).optional(),
  passwordFile: z.string().min(1).max(4096).optional(),
  /** 5 (MQTT 5), 4 (MQTT 3.1.1), or auto: 5, then 4 when the broker does not speak 5. */
  protocol: z.enum(['auto', '4', '5']).default('auto'),
  connectTimeoutMs: z.number().int().min(100).max(120_000).default(10_000),
});
export type FleetConnectionOptions = z.input<typeof FleetConnectionOptions>;
export type FleetConnectionSettings = z.output<typeof FleetConnectionOptions>;

export function parseConnectionOptions(input: FleetConnectionOptions): FleetConnectionSettings {
  const parsed = FleetConnectionOptions.safeParse(input);
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((i) => `${i.path.join('.') || 'options'}: ${i.message}`).join('; ');
    throw new QrvendError(ErrorCodes.CLI_USAGE, `fleet connection options refused: ${reasons}`);
  }
  const s = parsed.data;
  if ((s.certFile === undefined) !== (s.keyFile === undefined)) {
    throw new QrvendError(ErrorCodes.CLI_USAGE, 'a client certificate needs both --cert and --key');
  }
  if (s.passwordFile !== undefined && s.username === undefined) {
    throw new QrvendError(ErrorCodes.CLI_USAGE, '--password-file needs --username');
  }
  return s;
}

const MAX_PEM_BYTES = 1024 * 1024;
const MAX_PASSWORD_BYTES = 4096;

function readBounded(path: string, limit: number, what: string): Buffer {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.CONFIG_UNREADABLE,
      `${what} ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  if (size > limit)
    throw new QrvendError(ErrorCodes.CONFIG_UNREADABLE, `${what} ${path} is larger than ${limit} bytes`);
  try {
    return readFileSync(path);
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.CONFIG_UNREADABLE,
      `${what} ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
}

/** The password, from its file: one line, the trailing newline dropped. Never logged or shown. */
export function readPasswordFile(path: string): Buffer {
  const text = readBounded(path, MAX_PASSWORD_BYTES, 'password file')
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (text.length === 0 || /[\r\n]/.test(text)) {
    throw new QrvendError(ErrorCodes.SECRET_UNREADABLE, `password file ${path} must hold one non-empty line`);
  }
  return Buffer.from(text, 'utf8');
}

/** The broker as it may be shown: scheme, host and port only. */
export function brokerLabel(url: string): string {
  return url.replace(/\/\/[^/@]*@/, '//');
}

export interface FleetConnection {
  client: MqttClient;
  /** The protocol the broker accepted: 4 (3.1.1) or 5. */
  protocol: 4 | 5;
  settings: FleetConnectionSettings;
}

/** A client id that is unique per run, so two operators never kick each other off the broker. */
export function operatorClientId(purpose: string): string {
  return `qrvend-op-${purpose}-${randomBytes(6).toString('hex')}`;
}

/** How long the broker keeps a named (persistent) operator session while it is away: 7 days. */
export const SESSION_EXPIRY_S = 7 * 24 * 3600;

function clientOptions(
  s: FleetConnectionSettings,
  protocol: 4 | 5,
  extra: Partial<IClientOptions>,
  session: string | undefined,
): IClientOptions {
  const options: IClientOptions = {
    protocolVersion: protocol,
    clean: session === undefined,
    // The Maximum Packet Size (MQTT 5): a 200 MB status never reaches the CLI (docs/decisions/fleet-trust.md item 11).
    properties: maxPacketProperties(
      protocol,
      session !== undefined && protocol === 5 ? { sessionExpiryInterval: SESSION_EXPIRY_S } : undefined,
    ),
    reconnectPeriod: 0,
    connectTimeout: s.connectTimeoutMs,
    keepalive: 30,
    ...extra,
  };
  if (s.username !== undefined) options.username = s.username;
  if (s.passwordFile !== undefined) options.password = readPasswordFile(s.passwordFile);
  if (s.caFile !== undefined) options.ca = readBounded(s.caFile, MAX_PEM_BYTES, 'CA file');
  if (s.certFile !== undefined) options.cert = readBounded(s.certFile, MAX_PEM_BYTES, 'client certificate');
  if (s.keyFile !== undefined) options.key = readBounded(s.keyFile, MAX_PEM_BYTES, 'client key');
  if (s.url.startsWith('mqtts:')) options.rejectUnauthorized = true;
  return options;
}

/** CONNACK codes that mean "wrong protocol version" (3.1.1: 1; MQTT 5: 0x84). */
function isProtocolRefusal(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 1 || code === 0x84;
}

/** CONNACK codes that mean "who you are is refused" (3.1.1: 4, 5; MQTT 5: 0x86, 0x87, 0x8a...). */
function isAuthRefusal(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 4 || code === 5 || code === 0x86 || code === 0x87 || code === 0x8a || code === 0x8c;
}

function connectOnce(
  url: string,
  options: IClientOptions,
  timeoutMs: number,
  beforeConnect?: (client: MqttClient) => void,
): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    // Connected by hand, so the packet bound is in place on the first socket too (src/fleet/packet-bound.ts).
    const client = mqtt.connect(url, { ...options, manualConnect: true });
    boundInboundPackets(client, options.protocolVersion ?? 4);
    beforeConnect?.(client);
    client.connect();
    let settled = false;
    const finish = (err: unknown | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.off('connect', onConnect);
      client.off('error', onError);
      client.off('close', onClose);
      if (err === null) {
        resolve(client);
      } else {
        client.end(true);
        reject(err);
      }
    };
    const onConnect = () => {
      setNoDelayOn(client.stream);
      finish(null);
    };
    const onError = (err: unknown) => finish(err);
    const onClose = () => finish(new Error('connection closed before the broker accepted it'));
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs + 500);
    client.on('connect', onConnect);
    client.on('error', onError);
    client.on('close', onClose);
  });
}

/**
 * Connects as an operator. `reconnect` (ms) keeps the client reconnecting after the first
 * successful connect (fleet watch); the first connect never retries, so a wrong URL or password
 * fails at once with a clear error.
 */
export interface ConnectFleetOptions {
  purpose: string;
  reconnectMs?: number;
  extra?: Partial<IClientOptions>;
  /**
   * A persistent session under this name (client id `qrvend-op-<purpose>-<name>`, clean=false,
   * MQTT 5 session expiry 7 days): the broker keeps the subscriptions and queues QoS 1 messages
   * while the client is away, and hands them over when it comes back.
   */
  session?: string;
  /**
   * Called with the client before it connects: a message handler set here
   * misses nothing a resumed session delivers at once.
   */
  beforeConnect?: (client: MqttClient) => void;
}

export async function connectFleet(
  input: FleetConnectionOptions | FleetConnectionSettings,
  options: ConnectFleetOptions,
): Promise<FleetConnection> {
  const settings = parseConnectionOptions(input as FleetConnectionOptions);
  const tries: (4 | 5)[] = settings.protocol === 'auto' ? [5, 4] : [Number(settings.protocol) as 4 | 5];
  const label = brokerLabel(settings.url);
  let last: unknown = null;
  for (const protocol of tries) {
    if (options.session !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(options.session)) {
      throw new QrvendError(ErrorCodes.CLI_USAGE, 'a session name is 1-64 letters, digits or ._-');
    }
    const clientId =
      options.session !== undefined
        ? `qrvend-op-${options.purpose}-${options.session}`
        : operatorClientId(options.purpose);
    const opts = clientOptions(settings, protocol, { clientId, ...options.extra }, options.session);
    try {
      const client = await connectOnce(settings.url, opts, settings.connectTimeoutMs, options.beforeConnect);
      if (options.reconnectMs !== undefined) client.options.reconnectPeriod = options.reconnectMs;
      client.on('connect', () => void setNoDelayOn(client.stream));
      return { client, protocol, settings };
    } catch (err) {
      last = err;
      if (isProtocolRefusal(err) && protocol === 5 && tries.length > 1) continue;
      break;
    }
  }
  const reason = (last as Error)?.message ?? String(last);
  if (isAuthRefusal(last)) {
    throw new QrvendError(ErrorCodes.FLEET_BROKER_REFUSED, `the broker at ${label} refused the connection: ${reason}`, {
      hint: 'check --username, --password-file, the client certificate, and the broker ACL',
    });
  }
  throw new QrvendError(ErrorCodes.FLEET_BROKER_UNREACHABLE, `cannot connect to the broker at ${label}: ${reason}`, {
    hint: 'check --url (or QRVEND_FLEET_URL), that the broker runs, and TLS (--ca for mqtts://)',
  });
}
