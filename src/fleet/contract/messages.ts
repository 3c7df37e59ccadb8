/**
 * Payloads on the fleet topics (docs/decisions/fleet-link.md), as zod schemas: the device validates what it
 * receives (commands), the operator CLI and the relay validate what they receive (status, events,
 * replies). Every payload is one JSON object; `at` is the sender's wall clock (ISO 8601 UTC),
 * informative only: order and deduplication go by eventId, never by time.
 */
import { z } from 'zod';
import { ALARM_CODES } from './alarms.js';
import { UpdateEvent, UpdateStatus } from './updates.js';
import { AuditEvent } from './audit.js';
import { UPDATE_ARCHES } from './manifest-schema.js';
import { CatalogStatus } from './catalog.js';

/** Largest payload either side accepts; bigger messages are counted and dropped. */
export const MAX_PAYLOAD_BYTES = 64 * 1024;

const Iso = z.string().max(40);
const Id = z.string().min(1).max(128);
const ReaderState = z.enum(['offline', 'inactive', 'disabled', 'enabled', 'session', 'vend']);

/** Retained on `status`. A machine that went away leaves only `{ online: false }` (its last will). */
export const StatusMessage = z.union([
  z.object({
    online: z.literal(true),
    machineId: Id,
    terminalId: Id,
    uniQr: z.string().max(255).nullable(),
    version: z.string().max(64),
    /**
     * The release architecture (Debian name), so a rollout offers a manifest
     * only to machines it fits; absent on older agents.
     */
    arch: z.enum(UPDATE_ARCHES).optional(),
    startedAt: Iso,
    reader: ReaderState,
    /** Out of service from afar (reader.disable); takes effect after a running session. */
    readerDisabledRemotely: z.boolean(),
    gateway: z.enum(['online', 'offline']),
    outbox: z.object({ pending: z.number().int().min(0), dead: z.number().int().min(0) }),
    alarms: z.array(z.enum(ALARM_CODES)).max(ALARM_CODES.length),
    /** Whether this machine takes relayed Starts (fleet link up, Start relay enabled on the device). */
    acceptsRelayedStart: z.boolean(),
    /** The last update this machine heard of (docs/decisions/remote-updates.md); absent on machines without one. */
    update: UpdateStatus.optional(),
    /** The catalog document it runs, waits to apply, or last refused (contract/catalog.ts); absent on older agents. */
    catalog: CatalogStatus.optional(),
    at: Iso,
    /** The machine's own signature over what the relay acts on (src/trust/machine-sig.ts); checked by the relay. */
    machineSig: z.unknown().optional(),
  }),
  /** The last will (signed when its connection opened) or a graceful stop (signed then). */
  z.object({ online: z.literal(false), machineSig: z.unknown().optional() }),
]);
export type StatusMessage = z.infer<typeof StatusMessage>;

/** A payment closed (settled, cancelled, voided, or declined after an approval). */
export const SaleEvent = z.object({
  kind: z.literal('sale'),
  eventId: Id,
  at: Iso,
  machineId: Id,
  txId: Id,
  flow: z.enum(['static', 'dynamic']),
  /** Amount charged, as the gateway's decimal text (e.g. "1.50"): never a rounded double. */
  amount: z.string().max(32),
  currency: z.string().max(3),
  /** The vends the VMC reported. */
  products: z
    .array(z.object({ item: z.number().int(), price: z.string().max(32), outcome: z.string().max(32) }))
    .max(256),
  /** How the payment closed: settlement, cancel, void. */
  closing: z.enum(['settlement', 'cancel', 'void']),
  /** The gateway's verdict on the closing: accepted, or dead-lettered (needs a person). */
  verdict: z.enum(['accepted', 'dead-letter']),
});
export type SaleEvent = z.infer<typeof SaleEvent>;

export const AlarmEvent = z.object({
  kind: z.literal('alarm'),
  eventId: Id,
  at: Iso,
  machineId: Id,
  code: z.enum(ALARM_CODES),
  state: z.enum(['raised', 'cleared']),
  /** A line a technician can act on; never a secret. */
  detail: z.string().max(512).nullable(),
});
export type AlarmEvent = z.infer<typeof AlarmEvent>;

/**
 * A sale the VMC reported as paid to another device (coins, bills, its other card reader; MDB CASH
 * SALE). qrvend charged nothing for it; it is published so the operator sees the whole turnover.
 */
export const CashSaleEvent = z.object({
  kind: z.literal('cash-sale'),
  eventId: Id,
  at: Iso,
  machineId: Id,
  /** The MDB item number as the VMC sent it (bits 15-12 flag free, test, negative and token vends). */
  item: z.number().int().min(0).max(65535),
  /** Price as decimal text (e.g. "1.15"). */
  price: z.string().max(32),
  currency: z.string().max(3),
});
export type CashSaleEvent = z.infer<typeof CashSaleEvent>;

export const FleetEvent = z.discriminatedUnion('kind', [SaleEvent, AlarmEvent, CashSaleEvent, UpdateEvent, AuditEvent]);
export type FleetEvent = z.infer<typeof FleetEvent>;

/** QoS 0 on `health`: the figures of the daemon's stats log line, as they are. */
export const HealthMessage = z.object({
  machineId: Id,
  at: Iso,
  stats: z.record(z.string(), z.unknown()),
});
export type HealthMessage = z.infer<typeof HealthMessage>;

/**
 * A command on `cmd/<name>`. MQTT 5 requesters put the reply topic and correlation data in the
 * packet's properties; MQTT 3.1.1 requesters put `replyTo` and `correlationId` in the body.
 * `args` is the command's own object (see commands.ts). `signature` is an operator's signature
 * (src/trust/signed.ts, `SignatureSchema`) over the statement of kind `command` built by
 * `commandStatement` (scopes.ts); the device checks its shape, so here it is only carried.
 */
export const CommandRequest = z.object({
  replyTo: z.string().min(1).max(512).optional(),
  correlationId: z.string().min(1).max(128).optional(),
  args: z.unknown().optional(),
  signature: z.unknown().optional(),
});
export type CommandRequest = z.infer<typeof CommandRequest>;

/** Stable error codes in a command reply. */
export const COMMAND_ERROR_CODES = [
  'UNKNOWN_COMMAND',
  'BAD_PAYLOAD',
  'BAD_ARGS',
  'CONFIG_INVALID',
  'BUSY',
  'TOO_LATE',
  'UNAVAILABLE',
  'INTERNAL',
  /**
   * Not signed, or not by a key trusted here for the command's scope, or stale, replayed, or the clock is unsynced (the
   * message says which).
   */
  'UNAUTHORIZED',
] as const;
export type CommandErrorCode = (typeof COMMAND_ERROR_CODES)[number];

/**
 * `machineSig`: the machine's signature over the reply
 * (src/trust/machine-sig.ts); the relay believes no reply without it.
 */
export const CommandReply = z.union([
  z.object({
    ok: z.literal(true),
    machineId: Id,
    command: z.string().max(64),
    correlationId: z.string().max(128).nullable(),
    result: z.unknown(),
    machineSig: z.unknown().optional(),
  }),
  z.object({
    ok: z.literal(false),
    machineId: Id,
    command: z.string().max(64),
    correlationId: z.string().max(128).nullable(),
    error: z.object({ code: z.enum(COMMAND_ERROR_CODES), message: z.string().max(1024) }),
    machineSig: z.unknown().optional(),
  }),
]);
export type CommandReply = z.infer<typeof CommandReply>;
