/**
 * Reading a command that arrived on `<prefix>/<machineId>/cmd/<name>`: size, JSON, the request's
 * shape, the command's name, and where the reply goes (the MQTT 5 response topic and correlation
 * data, or for MQTT 3.1.1 the body's replyTo / correlationId). Pure: whatever arrives, the result
 * is a request or an error to answer with, never a throw.
 */
import { firstMemberNamed, PROTOTYPE_MEMBER } from '../../core/json-member-names.js';
import { CommandRequest, MAX_PAYLOAD_BYTES, type CommandErrorCode } from '../contract/messages.js';
import { isCommandName, parseTopic, type CommandName } from '../contract/topics.js';

export type { CommandErrorCode } from '../contract/messages.js';

export interface ReplyRoute {
  topic: string;
  /** Echoed as `correlationId` in the body (and as MQTT 5 correlation data when it came as that). */
  correlationId: string | null;
  correlationData: Buffer | null;
}

export type ParsedCommand =
  | {
      kind: 'request';
      name: CommandName;
      args: unknown;
      /** As received (undefined: unsigned); checked by command-gate.ts. */
      signature: unknown;
      reply: ReplyRoute;
      /** MQTT 5 message expiry, seconds, when given. */
      expirySeconds: number | null;
    }
  | { kind: 'error'; name: string; code: CommandErrorCode; message: string; reply: ReplyRoute }
  /** Not ours at all (another machine's topic): dropped, never answered. */
  | { kind: 'ignore'; reason: string };

export interface IncomingProperties {
  responseTopic?: string | undefined;
  correlationData?: Buffer | undefined;
  messageExpiryInterval?: number | undefined;
}

const REPLY_TOPIC_OK = /^[^#+\0]{1,512}$/;

export function parseCommand(
  prefix: string,
  machineId: string,
  defaultReplyTopic: string,
  topic: string,
  payload: Buffer,
  properties: IncomingProperties = {},
): ParsedCommand {
  const parsed = parseTopic(prefix, topic);
  if (parsed === null || parsed.kind !== 'command' || parsed.machineId !== machineId)
    return { kind: 'ignore', reason: `not a command topic of this machine: ${topic.slice(0, 200)}` };
  const name = parsed.name;
  const propTopic =
    properties.responseTopic !== undefined && REPLY_TOPIC_OK.test(properties.responseTopic)
      ? properties.responseTopic
      : null;
  const propCorrelation =
    properties.correlationData !== undefined && properties.correlationData.length <= 128
      ? properties.correlationData
      : null;
  const route = (body: { replyTo?: string | undefined; correlationId?: string | undefined } = {}): ReplyRoute => ({
    topic:
      propTopic ?? (body.replyTo !== undefined && REPLY_TOPIC_OK.test(body.replyTo) ? body.replyTo : defaultReplyTopic),
    correlationId: body.correlationId ?? (propCorrelation !== null ? propCorrelation.toString('utf8') : null),
    correlationData: propCorrelation,
  });
  const fail = (code: CommandErrorCode, message: string, reply = route()): ParsedCommand => ({
    kind: 'error',
    name,
    code,
    message,
    reply,
  });

  if (payload.length > MAX_PAYLOAD_BYTES)
    return fail('BAD_PAYLOAD', `payload of ${payload.length} bytes is over the ${MAX_PAYLOAD_BYTES}-byte limit`);
  let json: unknown = {};
  if (payload.length > 0) {
    const text = payload.toString('utf8');
    // Read from the text before anything is built from it (src/core/json-member-names.ts): a
    // `__proto__` member would become a prototype, unseen, wherever the request is copied.
    const proto = firstMemberNamed(text, PROTOTYPE_MEMBER);
    try {
      json = JSON.parse(text);
    } catch {
      return fail('BAD_PAYLOAD', 'payload is not JSON');
    }
    if (proto !== null) return prototypeRefusal(proto, json, fail, route);
  }
  const request = CommandRequest.safeParse(json);
  if (!request.success || typeof json !== 'object' || json === null || Array.isArray(json)) {
    const where = request.success ? '(root)' : request.error.issues[0]?.path.join('.') || '(root)';
    return fail(
      'BAD_PAYLOAD',
      `payload must be a JSON object { replyTo?, correlationId?, args?, signature? }: ${where} is wrong`,
    );
  }
  const reply = route(request.data);
  if (!isCommandName(name))
    return fail('UNKNOWN_COMMAND', `no command named ${JSON.stringify(name.slice(0, 64))}`, reply);
  const expiry = properties.messageExpiryInterval;
  return {
    kind: 'request',
    name,
    args: request.data.args ?? {},
    signature: request.data.signature,
    reply,
    expirySeconds: typeof expiry === 'number' ? expiry : null,
  };
}

/** The refusal of a request naming `__proto__` (at `path`), answered where its body asks (read, never copied). */
function prototypeRefusal(
  path: string[],
  json: unknown,
  fail: (code: CommandErrorCode, message: string, reply?: ReplyRoute) => ParsedCommand,
  route: (body?: { replyTo?: string | undefined; correlationId?: string | undefined }) => ReplyRoute,
): ParsedCommand {
  const body = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
  const replyTo = typeof body.replyTo === 'string' ? body.replyTo : undefined;
  const correlationId = typeof body.correlationId === 'string' ? body.correlationId.slice(0, 128) : undefined;
  const where = path.join('.').slice(0, 200);
  return fail(
    path[0] === 'args' ? 'BAD_ARGS' : 'BAD_PAYLOAD',
    `${where}: a member named "__proto__" is refused (JavaScript gives the name a meaning; it is no key)`,
    route({ replyTo, correlationId }),
  );
}
