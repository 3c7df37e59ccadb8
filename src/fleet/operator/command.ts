/**
 * `qrvend fleet cmd`: one request, one reply. The request goes to `<prefix>/<machine>/cmd/<name>`
 * at QoS 1; the reply is awaited on the machine's own `replies` topic (the one topic the broker's
 * ACL lets the device write replies to) and matched by a random correlation id. With MQTT 5 the
 * response topic and correlation data travel as properties, and the body carries `replyTo` and
 * `correlationId` too, so a device connected with 3.1.1 (which never sees properties) still
 * answers. A reply that does not match the contract is counted and skipped.
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import type { IClientPublishOptions, IPublishPacket, MqttClient } from 'mqtt';
import type { z } from 'zod';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import {
  COMMAND_NAMES,
  ConfigGetArgs,
  ConfigSetArgs,
  MAX_PAYLOAD_BYTES,
  OutboxRetryArgs,
  RelayedStartArgs,
  TOPIC_LEVEL,
  UpdateOfferArgs,
  isCommandName,
  machineTopics,
  type CommandName,
  type CommandReply,
  type StatusMessage,
} from '../contract/index.js';
import { decodeFleetMessage } from './decode.js';
import { COMMAND_STATEMENT_KIND, commandStatement } from '../contract/scopes.js';
import { signStatement } from '../../trust/signed.js';

const ARGS: Partial<Record<CommandName, z.ZodType>> = {
  'outbox.retry': OutboxRetryArgs,
  'config.get': ConfigGetArgs,
  'config.set': ConfigSetArgs,
  start: RelayedStartArgs,
  'update.offer': UpdateOfferArgs,
};

/** Checks a command before it leaves: a known name, a safe machine id, arguments the contract allows. */
export function checkCommand(machineId: string, name: string, args: unknown): CommandName {
  if (!TOPIC_LEVEL.test(machineId))
    throw new QrvendError(
      ErrorCodes.CLI_USAGE,
      `machine id must be 1-128 letters, digits or ._:-, got ${JSON.stringify(machineId.slice(0, 140))}`,
    );
  if (!isCommandName(name))
    throw new QrvendError(ErrorCodes.CLI_USAGE, `unknown command "${name.slice(0, 64)}"`, {
      hint: `one of: ${COMMAND_NAMES.join(', ')}`,
    });
  const schema = ARGS[name];
  if (schema === undefined) {
    const empty =
      args === undefined ||
      (typeof args === 'object' && args !== null && !Array.isArray(args) && Object.keys(args).length === 0);
    if (!empty) throw new QrvendError(ErrorCodes.CLI_USAGE, `${name} takes no arguments`);
    return name;
  }
  const checked = schema.safeParse(args ?? {});
  if (!checked.success) {
    const reasons = checked.error.issues.map((i) => `${i.path.join('.') || 'args'}: ${i.message}`).join('; ');
    throw new QrvendError(ErrorCodes.CLI_USAGE, `arguments of ${name} refused: ${reasons}`);
  }
  return name;
}

/** The `[json]` argument of `qrvend fleet cmd`: one JSON object, bounded. */
export function parseArgsText(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  if (Buffer.byteLength(text) > MAX_PAYLOAD_BYTES - 1024)
    throw new QrvendError(ErrorCodes.CLI_USAGE, `arguments are larger than ${MAX_PAYLOAD_BYTES - 1024} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new QrvendError(
      ErrorCodes.CLI_USAGE,
      'arguments must be one JSON object, e.g. \'{"key":"gateway.timeoutMs"}\'',
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new QrvendError(ErrorCodes.CLI_USAGE, 'arguments must be a JSON object');
  return value;
}

export interface CommandRequestOptions {
  prefix: string;
  machineId: string;
  name: string;
  args?: unknown;
  timeoutMs: number;
  protocol: 4 | 5;
  /**
   * The operator's key (docs/fleet.md "Signed commands"); absent = unsigned (reads on machines with
   * fleet.allowUnsignedReads).
   */
  signer?: CommandSigner;
}

export interface CommandSigner {
  keyId: string;
  key: KeyObject;
  /** How long the signed command stays valid (default 60 s, at most 15 min). */
  lifetimeMs?: number;
  /** The signature format (default 2, the key id signed; 1 only for a machine of an older release). */
  format?: 1 | 2;
}

export interface CommandOutcome {
  reply: CommandReply;
  elapsedMs: number;
  malformedReplies: number;
}

export async function sendFleetCommand(client: MqttClient, options: CommandRequestOptions): Promise<CommandOutcome> {
  const name = checkCommand(options.machineId, options.name, options.args);
  const topics = machineTopics(options.prefix, options.machineId);
  const correlationId = randomBytes(16).toString('hex');
  let malformed = 0;
  let status: StatusMessage | null = null;
  const t0 = performance.now();

  let resolveReply!: (reply: CommandReply) => void;
  const replied = new Promise<CommandReply>((resolve) => (resolveReply = resolve));
  const onMessage = (topic: string, payload: Buffer, packet: IPublishPacket) => {
    const decoded = decodeFleetMessage(options.prefix, topic, payload);
    if (decoded.kind === 'status' && decoded.machineId === options.machineId) status = decoded.status;
    if (topic !== topics.replies) return;
    if (decoded.kind !== 'reply') {
      malformed += 1;
      return;
    }
    const property = packet.properties?.correlationData;
    const matches =
      decoded.reply.correlationId === correlationId ||
      (property !== undefined && Buffer.from(property).toString('utf8') === correlationId);
    if (matches) resolveReply(decoded.reply);
  };
  client.on('message', onMessage);
  let timer: NodeJS.Timeout | undefined;
  try {
    await client.subscribeAsync({ [topics.replies]: { qos: 1 }, [topics.status]: { qos: 1 } });
    const body = requestBody(options, name, topics.replies, correlationId);
    await client.publishAsync(topics.command(name), body, publishOptions(options, topics.replies, correlationId));
    const timedOut = new Promise<null>(
      (resolve) => (timer = setTimeout(() => resolve(null), Math.max(0, options.timeoutMs - (performance.now() - t0)))),
    );
    const reply = await Promise.race([replied, timedOut]);
    if (reply === null) throw noReplyError(options, status as StatusMessage | null, malformed);
    return { reply, elapsedMs: performance.now() - t0, malformedReplies: malformed };
  } finally {
    if (timer) clearTimeout(timer);
    client.off('message', onMessage);
    await client.unsubscribeAsync([topics.replies, topics.status]).catch(() => undefined);
  }
}

/** The request's body: where to reply, the correlation id, the arguments and, when signed, the signature. */
function requestBody(
  options: CommandRequestOptions,
  name: CommandName,
  replyTo: string,
  correlationId: string,
): string {
  const signature =
    options.signer === undefined
      ? undefined
      : signStatement(COMMAND_STATEMENT_KIND, commandStatement(options.machineId, name, options.args), {
          keyId: options.signer.keyId,
          key: options.signer.key,
          nowMs: Date.now(),
          ...(options.signer.lifetimeMs !== undefined ? { lifetimeMs: options.signer.lifetimeMs } : {}),
          ...(options.signer.format !== undefined ? { format: options.signer.format } : {}),
        });
  return JSON.stringify({
    replyTo,
    correlationId,
    ...(options.args === undefined ? {} : { args: options.args }),
    ...(signature === undefined ? {} : { signature }),
  });
}

/** QoS 1; with MQTT 5 also the response topic, correlation data and an expiry at the reply timeout. */
function publishOptions(options: CommandRequestOptions, replyTo: string, correlationId: string): IClientPublishOptions {
  const expirySeconds = Math.max(1, Math.ceil(options.timeoutMs / 1000));
  return options.protocol === 5
    ? {
        qos: 1,
        properties: {
          responseTopic: replyTo,
          correlationData: Buffer.from(correlationId, 'utf8'),
          messageExpiryInterval: expirySeconds,
          contentType: 'application/json',
        },
      }
    : { qos: 1 };
}

/** FLEET_NO_REPLY, saying what the machine's retained status said meanwhile. */
function noReplyError(options: CommandRequestOptions, known: StatusMessage | null, malformed: number): QrvendError {
  const state =
    known === null
      ? 'no retained status seen'
      : known.online
        ? 'its retained status says online'
        : 'its retained status says OFFLINE (last will)';
  return new QrvendError(
    ErrorCodes.FLEET_NO_REPLY,
    `no reply from ${options.machineId} to ${options.name} within ${options.timeoutMs} ms ` +
      `(${state}${malformed > 0 ? `; ${malformed} malformed replies skipped` : ''})`,
    { hint: 'the machine may be offline or its fleet link down; the request expires on the broker after the timeout' },
  );
}
