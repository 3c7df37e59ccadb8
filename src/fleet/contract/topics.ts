/**
 * Fleet topics (docs/decisions/fleet-link.md): everything a machine says or hears lives under
 * `<fleet.topicPrefix>/<machineId>/`. The broker's ACL confines each device to its own prefix,
 * so these names are part of the contract with the operator's broker and must not drift.
 */

/** A topic level we build ourselves: no wildcard, no separator, no NUL, not empty, bounded. */
export const TOPIC_LEVEL = /^[A-Za-z0-9._:-]{1,128}$/;
/** A prefix may have several levels (`acme/vending`), each a TOPIC_LEVEL. */
export const TOPIC_PREFIX = /^[A-Za-z0-9._:-]{1,128}(\/[A-Za-z0-9._:-]{1,128}){0,7}$/;

/** Command names as they appear after `cmd/`. */
export const COMMAND_NAMES = [
  'ping',
  'doctor',
  'outbox.list',
  'outbox.retry',
  'reader.disable',
  'reader.enable',
  'config.get',
  'config.set',
  'service.restart',
  /** A Start forwarded by `qrvend relay` (docs/decisions/fleet-link.md, Start relay). */
  'start',
  /** The relay wrote the machine's Approved answer to the wallet in time: authorize it. */
  'start.confirm',
  /** A signed update manifest and where to fetch it (docs/decisions/remote-updates.md, contract/updates.ts). */
  'update.offer',
  /** Read the VMC's EVA-DTS audit now (docs/decisions/machine-audit.md, contract/audit.ts). */
  'dex.read',
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

export function isCommandName(name: string): name is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(name);
}

export interface MachineTopics {
  /** Retained, QoS 1: the machine's StatusMessage; the last will publishes `{"online": false}` here. */
  status: string;
  /** QoS 1: one FleetEvent per message. */
  events: string;
  /** QoS 0: HealthMessage every fleet.healthIntervalS. */
  health: string;
  /** What the device subscribes to: its own commands only. */
  commandFilter: string;
  /** Where an operator (or the relay) publishes a command for this machine. */
  command(name: CommandName): string;
  /** Default reply topic for MQTT 3.1.1 requesters that give none of their own. */
  replies: string;
  /** Retained, QoS 1, written by operators: the machine's signed catalog document (catalog.ts). */
  catalog: string;
}

export function machineTopics(prefix: string, machineId: string): MachineTopics {
  const base = `${prefix}/${machineId}`;
  return {
    status: `${base}/status`,
    events: `${base}/events`,
    health: `${base}/health`,
    commandFilter: `${base}/cmd/+`,
    command: (name) => `${base}/cmd/${name}`,
    replies: `${base}/replies`,
    catalog: `${base}/catalog`,
  };
}

/** Operator-side subscriptions over the whole fleet. */
export function fleetFilters(prefix: string): { status: string; events: string; health: string; catalog: string } {
  return {
    status: `${prefix}/+/status`,
    events: `${prefix}/+/events`,
    health: `${prefix}/+/health`,
    catalog: `${prefix}/+/catalog`,
  };
}

export type ParsedTopic =
  | { kind: 'status' | 'events' | 'health' | 'replies' | 'catalog'; machineId: string }
  | { kind: 'command'; machineId: string; name: string };

/** Reads a topic under `prefix`; null when it is not one of ours (counted and dropped by callers). */
export function parseTopic(prefix: string, topic: string): ParsedTopic | null {
  if (!topic.startsWith(`${prefix}/`)) return null;
  const rest = topic.slice(prefix.length + 1).split('/');
  const machineId = rest[0];
  if (machineId === undefined || !TOPIC_LEVEL.test(machineId)) return null;
  if (
    rest.length === 2 &&
    (rest[1] === 'status' ||
      rest[1] === 'events' ||
      rest[1] === 'health' ||
      rest[1] === 'replies' ||
      rest[1] === 'catalog')
  ) {
    return { kind: rest[1], machineId };
  }
  if (rest.length === 3 && rest[1] === 'cmd' && rest[2] !== undefined && rest[2].length > 0 && rest[2].length <= 64) {
    return { kind: 'command', machineId, name: rest[2] };
  }
  return null;
}
