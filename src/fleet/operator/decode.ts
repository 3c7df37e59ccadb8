/**
 * What the operator side makes of one message from the broker. Everything from a device is
 * hostile: a payload is bounded, parsed as JSON and checked with the contract's schemas, and the
 * machine is the one in the topic (the level the broker's ACL confines a device to), never the one
 * a payload claims. Anything else is `bad` with a reason: counted and skipped by the callers.
 * Pure: no I/O.
 */
import {
  CommandReply,
  FleetEvent,
  HealthMessage,
  MAX_PAYLOAD_BYTES,
  StatusMessage,
  parseTopic,
} from '../contract/index.js';

export type BadReason = 'topic' | 'too-large' | 'not-json' | 'schema' | 'machine-mismatch';

export type Decoded =
  | { kind: 'status'; machineId: string; status: StatusMessage }
  /** An empty retained status: someone removed the machine from the broker's retained store. */
  | { kind: 'removed'; machineId: string }
  | { kind: 'event'; machineId: string; event: FleetEvent }
  | { kind: 'health'; machineId: string; health: HealthMessage }
  | { kind: 'reply'; machineId: string; reply: CommandReply }
  /** A command on the wire (another operator's): not ours to read. */
  | { kind: 'ignored'; machineId: string | null }
  | { kind: 'bad'; machineId: string | null; topic: string; reason: BadReason; detail: string };

function bad(machineId: string | null, topic: string, reason: BadReason, detail: string): Decoded {
  return { kind: 'bad', machineId, topic, reason, detail };
}

export function decodeFleetMessage(prefix: string, topic: string, payload: Uint8Array): Decoded {
  const parsed = parseTopic(prefix, topic);
  if (parsed === null) return bad(null, topic, 'topic', 'not a fleet topic under the prefix');
  const { machineId } = parsed;
  // A command, or an operator's catalog document (read by `qrvend fleet catalog status` itself).
  if (parsed.kind === 'command' || parsed.kind === 'catalog') return { kind: 'ignored', machineId };
  // Not the size received: a packet over the MQTT bound arrives cut to one byte over the limit
  // (src/fleet/packet-bound.ts).
  if (payload.byteLength > MAX_PAYLOAD_BYTES)
    return bad(machineId, topic, 'too-large', `more than ${MAX_PAYLOAD_BYTES} bytes`);
  if (payload.byteLength === 0 && parsed.kind === 'status') return { kind: 'removed', machineId };
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8'));
  } catch {
    return bad(machineId, topic, 'not-json', 'payload is not JSON');
  }
  const schema =
    parsed.kind === 'status'
      ? StatusMessage
      : parsed.kind === 'events'
        ? FleetEvent
        : parsed.kind === 'health'
          ? HealthMessage
          : CommandReply;
  const checked = schema.safeParse(json);
  if (!checked.success) {
    const first = checked.error.issues[0];
    return bad(
      machineId,
      topic,
      'schema',
      first ? `${first.path.join('.') || 'payload'}: ${first.message}` : 'does not match the contract',
    );
  }
  const value = checked.data as { machineId?: string };
  if (value.machineId !== undefined && value.machineId !== machineId) {
    return bad(machineId, topic, 'machine-mismatch', 'payload names another machine than its topic');
  }
  switch (parsed.kind) {
    case 'status':
      return { kind: 'status', machineId, status: checked.data as StatusMessage };
    case 'events':
      return { kind: 'event', machineId, event: checked.data as FleetEvent };
    case 'health':
      return { kind: 'health', machineId, health: checked.data as HealthMessage };
    case 'replies':
      return { kind: 'reply', machineId, reply: checked.data as CommandReply };
  }
}
