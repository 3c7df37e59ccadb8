/**
 * The relay's one MQTT connection to the fleet broker: it follows the machines' retained status
 * (into a MachineDirectory) and sends `cmd/start` requests, matching each reply to its request.
 *
 * Request/response (docs/decisions/fleet-link.md): MQTT 5 puts the reply topic and correlation data in the
 * packet's properties, with a message expiry shorter than the relay's timeout, so a broker never
 * hands a machine a Start the wallet was already told is declined. The body also carries
 * `replyTo`/`correlationId` (the MQTT 3.1.1 way), so a machine whose client speaks 3.1.1 behind a
 * broker that bridges the two still answers; and `deadlineAt` in the args is the guarantee that
 * holds for 3.1.1, which has no expiry (the machine refuses a Start that arrives after it).
 *
 * Replies go to the machine's own `<prefix>/<machineId>/replies`, the one reply topic the fleet ACL
 * lets a device write (docs/fleet/mosquitto-acl.conf). Every replica (and an operator's
 * `qrvend fleet cmd`) hears every reply there; each keeps only those whose correlation id it is
 * waiting for. Starts are few next to that cost; a per-replica topic would need the ACL widened.
 *
 * Bounded: at most `maxInFlight` requests wait at once; a broker that is not connected answers at
 * once (no queueing while offline); every wait ends at its deadline.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, type IClientOptions, type IPublishPacket, type MqttClient } from 'mqtt';
import type { Logger } from '../core/log.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import {
  CommandReply,
  fleetFilters,
  machineTopics,
  MAX_PAYLOAD_BYTES,
  parseTopic,
  RelayedStartResult,
  type RelayedStartArgs,
  type StartConfirmArgs,
} from '../fleet/contract/index.js';
import { refuseExposedSecret } from '../config/file-modes.js';
import type { RelayConfig } from './config.js';
import { MachineDirectory } from './directory.js';
import type { Registry } from './registry.js';
import { setNoDelayOn } from '../fleet/no-delay.js';
import { boundInboundPackets, maxPacketProperties } from '../fleet/packet-bound.js';
import { RepeatedLog } from '../core/log-limiter.js';
import { checkMachineReply, type MachineRefusal } from '../trust/machine-sig.js';

export type RequestOutcome =
  | { kind: 'answer'; result: RelayedStartResult }
  /** The machine said no without an HTTP answer (TOO_LATE, BUSY, UNKNOWN_COMMAND...), or its reply was unreadable. */
  | { kind: 'refused'; code: string }
  | { kind: 'timeout' }
  | { kind: 'broker-down' }
  | { kind: 'overloaded' }
  /** The Start does not fit in one fleet message (a body full of escapes). */
  | { kind: 'too-large' };

interface Pending {
  machineId: string;
  resolve(outcome: RequestOutcome): void;
  timer: NodeJS.Timeout;
}

export interface BrokerLinkStats {
  connected: boolean;
  machines: number;
  online: number;
  inFlight: number;
  statusDropped: { invalid: number; full: number };
  repliesUnmatched: number;
  repliesInvalid: number;
  /** Statuses not believed (unsigned, another key, a replay...), per reason (directory.ts). */
  statusRefused: Record<string, number>;
  /**
   * Replies to a waiting Start not believed, per reason: not signed by the machine's registry key; the Start waits on.
   */
  repliesRefused: Record<string, number>;
  /** Packets over the MQTT packet bound, cut before parsing (a broker that ignores the MQTT 5 property, or 3.1.1). */
  packetsTooLarge: number;
}

export interface BrokerLink {
  readonly directory: MachineDirectory;
  readonly clientId: string;
  readonly connected: boolean;
  /** Publishes `cmd/start` to `machineId` and waits until `deadlineAt` (epoch ms) at most. */
  request(machineId: string, args: RelayedStartArgs, waitMs: number): Promise<RequestOutcome>;
  /** Publishes `cmd/start.confirm` (QoS 1, no reply awaited): the wallet got the Approved answer in time. */
  confirm(machineId: string, args: StartConfirmArgs): void;
  stats(): BrokerLinkStats;
  close(): Promise<void>;
}

function readSecretFile(file: string, what: string, key: string): Buffer {
  refuseExposedSecret(file, what, ErrorCodes.CONFIG_UNREADABLE, key);
  try {
    return readFileSync(file);
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.CONFIG_UNREADABLE,
      `${what} ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      {
        hint: `check ${key} and that the relay's user can read the file`,
        details: { file },
      },
    );
  }
}

function readFile(file: string, what: string, key: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.CONFIG_UNREADABLE,
      `${what} ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      {
        hint: `check ${key}`,
        details: { file },
      },
    );
  }
}

export function mqttOptionsOf(broker: RelayConfig['broker'], clientId: string): IClientOptions {
  const options: IClientOptions = {
    clientId,
    protocolVersion: broker.protocolVersion,
    clean: true,
    keepalive: broker.keepaliveS,
    connectTimeout: broker.connectTimeoutMs,
    reconnectPeriod: 1_000,
    // A Start is never queued while the broker is away: the wallet gets 30 at once instead.
    queueQoSZero: false,
    resubscribe: true,
    // A 200 MB status must never reach this process (docs/decisions/fleet-trust.md item 11; src/fleet/packet-bound.ts).
    properties: maxPacketProperties(broker.protocolVersion),
  };
  if (broker.caFile !== null) options.ca = readFile(broker.caFile, 'broker CA file', 'relay.broker.caFile');
  if (broker.certFile !== null && broker.keyFile !== null) {
    options.cert = readFile(broker.certFile, 'broker client certificate', 'relay.broker.certFile');
    options.key = readSecretFile(broker.keyFile, 'broker client key', 'relay.broker.keyFile');
  }
  if (broker.username !== null && broker.passwordFile !== null) {
    options.username = broker.username;
    options.password = readSecretFile(broker.passwordFile, 'broker password file', 'relay.broker.passwordFile')
      .toString('utf8')
      .trim();
  }
  return options;
}

export function connectBrokerLink(config: RelayConfig, registry: () => Registry, log: Logger): BrokerLink {
  const broker = config.broker;
  const prefix = broker.topicPrefix;
  const clientId = broker.clientId ?? `qrvend-relay-${randomBytes(6).toString('hex')}`;
  const replyFilter = `${prefix}/+/replies`;
  const directory = new MachineDirectory(config.maxMachines, registry, log.child({ component: 'directory' }));
  const pending = new Map<string, Pending>();
  let repliesUnmatched = 0;
  let repliesInvalid = 0;
  const repliesRefused: Partial<Record<MachineRefusal, number>> = {};
  let closed = false;
  // Reconnects are tried every second while the broker is away: one error line per outage, not per try.
  let errorLogged = false;

  let packetsTooLarge = 0;
  // Connected by hand, so the packet bound is in place on the first socket too.
  const client: MqttClient = connect(broker.url, { ...mqttOptionsOf(broker, clientId), manualConnect: true });
  boundInboundPackets(client, broker.protocolVersion, () => void (packetsTooLarge += 1));
  client.connect();
  const blog = log.child({ component: 'broker' });

  client.on('connect', () => {
    // A Start is one small message each way: Nagle's algorithm against delayed ACKs would add up
    // to 40 ms per hop. (TLS and WebSocket streams carry the socket underneath; set it where there is one.)
    setNoDelayOn(client.stream);
    errorLogged = false;
    blog.info({ url: broker.url, protocolVersion: broker.protocolVersion, clientId }, 'connected to the fleet broker');
    // A new subscription re-delivers every retained status, which brings the map up to date
    // (kept meanwhile, so a reconnect does not turn known machines into Declined 50 for a moment).
    client.subscribe([fleetFilters(prefix).status, replyFilter], { qos: 1 }, (err) => {
      if (err && !closed) blog.error({ err: err.message }, 'subscribing to machine status and replies failed');
    });
  });
  client.on('close', () => {
    // Nothing can answer while the link is down (clean session: replies are not kept for us).
    for (const [id, p] of pending) settle(id, p, { kind: 'broker-down' });
  });
  client.on('offline', () => {
    if (!closed)
      blog.warn({ url: broker.url }, 'fleet broker unreachable: Starts are answered Declined 30 until it is back');
  });
  client.on('error', (err) => {
    if (errorLogged) return;
    errorLogged = true;
    blog.warn(
      { err: err.message, code: (err as { code?: unknown }).code },
      'fleet broker connection error (retrying every second; logged once until connected)',
    );
  });

  client.on('message', (topic: string, payload: Buffer, packet: IPublishPacket) => {
    if (payload.length > MAX_PAYLOAD_BYTES) return;
    const parsed = parseTopic(prefix, topic);
    if (parsed?.kind === 'status') directory.update(parsed.machineId, payload);
    else if (parsed?.kind === 'replies') onReply(parsed.machineId, payload, packet);
  });

  const refusalLog = new RepeatedLog({
    intervalMs: 60_000,
    write: (fields, repeated) =>
      log.warn(
        { event: 'relay.reply.refused', ...fields, repeated },
        `reply not believed (${String(fields.reason)}): ${String(fields.why)}; the Start waits for the machine's own`,
      ),
  });

  function onReply(topicMachineId: string, payload: Buffer, packet: IPublishPacket): void {
    let reply: CommandReply;
    let raw: Record<string, unknown>;
    try {
      raw = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
      const checked = CommandReply.safeParse(raw);
      if (!checked.success) throw new Error('schema');
      reply = checked.data;
    } catch {
      repliesInvalid += 1;
      return;
    }
    // The machine's acknowledgement of a confirmation: nobody waits for it.
    if (reply.command === 'start.confirm') return;
    const fromProperties = packet.properties?.correlationData;
    const correlationId = fromProperties !== undefined ? fromProperties.toString('utf8') : reply.correlationId;
    const waiting = correlationId === null ? undefined : pending.get(correlationId);
    if (
      correlationId === null ||
      waiting === undefined ||
      reply.command !== 'start' ||
      waiting.machineId !== reply.machineId ||
      waiting.machineId !== topicMachineId
    ) {
      // Too late (we already answered 30), another replica's or an operator's, or not from the machine asked.
      repliesUnmatched += 1;
      return;
    }
    // Only now, for a reply someone waits for, the signature arithmetic: a flood of others costs a map lookup.
    // The correlation id matched on (MQTT 5 property or body) is the one that must be signed: a signed
    // answer to another Start, replayed with this Start's correlation data, does not verify.
    const facts = { command: reply.command, correlationId, ok: reply.ok, result: raw['result'], error: raw['error'] };
    const signed = checkMachineReply(
      topicMachineId,
      facts,
      raw['machineSig'],
      registry().keysOf(topicMachineId),
      Date.now(),
    );
    if (!signed.ok) {
      repliesRefused[signed.reason] = (repliesRefused[signed.reason] ?? 0) + 1;
      refusalLog.add({
        machineId: topicMachineId,
        reason: signed.reason,
        why: signed.message.slice(0, 200),
        txId: transactionIdOf(reply),
      });
      return;
    }
    if (!reply.ok) return settle(correlationId, waiting, { kind: 'refused', code: reply.error.code });
    const result = RelayedStartResult.safeParse(reply.result);
    if (!result.success || !/^[\x20-\x7e]+$/.test(result.data.contentType)) {
      repliesInvalid += 1;
      return settle(correlationId, waiting, { kind: 'refused', code: 'BAD_RESULT' });
    }
    settle(correlationId, waiting, { kind: 'answer', result: result.data });
  }

  function settle(id: string, p: Pending, outcome: RequestOutcome): void {
    if (pending.get(id) !== p) return;
    pending.delete(id);
    clearTimeout(p.timer);
    p.resolve(outcome);
  }

  return {
    directory,
    clientId,
    get connected() {
      return client.connected;
    },
    request(machineId, args, waitMs) {
      if (!client.connected) return Promise.resolve({ kind: 'broker-down' });
      if (pending.size >= config.maxInFlight) return Promise.resolve({ kind: 'overloaded' });
      const correlationId = randomBytes(12).toString('hex');
      const topics = machineTopics(prefix, machineId);
      const replyTo = topics.replies;
      return new Promise<RequestOutcome>((resolve) => {
        const entry: Pending = {
          machineId,
          resolve,
          timer: setTimeout(() => settle(correlationId, entry, { kind: 'timeout' }), Math.max(0, waitMs)),
        };
        pending.set(correlationId, entry);
        const body = JSON.stringify({ replyTo, correlationId, args });
        if (Buffer.byteLength(body) > MAX_PAYLOAD_BYTES) return settle(correlationId, entry, { kind: 'too-large' });
        // Whole seconds, strictly shorter than the wait: a queued Start expires before the relay gives up.
        const expirySeconds = Math.max(1, Math.floor(waitMs / 1000) - 1);
        const properties =
          broker.protocolVersion === 5
            ? {
                properties: {
                  responseTopic: replyTo,
                  correlationData: Buffer.from(correlationId, 'utf8'),
                  messageExpiryInterval: expirySeconds,
                },
              }
            : {};
        client.publish(topics.command('start'), body, { qos: 1, retain: false, ...properties }, (err) => {
          if (err) settle(correlationId, entry, { kind: 'broker-down' });
        });
      });
    },
    confirm(machineId, args) {
      if (!client.connected) return;
      const topics = machineTopics(prefix, machineId);
      // Expires with the machine's grace: a confirmation held longer by a broker finds nothing held.
      const properties = broker.protocolVersion === 5 ? { properties: { messageExpiryInterval: 5 } } : {};
      client.publish(
        topics.command('start.confirm'),
        JSON.stringify({ args }),
        { qos: 1, retain: false, ...properties },
        (err) => {
          if (err && !closed)
            blog.warn(
              { machineId, txId: args.txId, err: err.message },
              'start.confirm not published: the machine will drop the Start',
            );
        },
      );
    },
    stats() {
      return {
        connected: client.connected,
        machines: directory.size,
        online: directory.onlineCount,
        inFlight: pending.size,
        statusDropped: { ...directory.dropped },
        repliesUnmatched,
        repliesInvalid,
        statusRefused: { ...directory.statusRefused },
        repliesRefused: { ...repliesRefused },
        packetsTooLarge,
      };
    },
    async close() {
      closed = true;
      for (const [id, p] of pending) settle(id, p, { kind: 'broker-down' });
      await new Promise<void>((resolve) => client.end(true, {}, () => resolve()));
    },
  };
}

/** The TransactionId an answer names, for the log line of a refused reply (never the body). */
function transactionIdOf(reply: CommandReply): string | undefined {
  if (!reply.ok) return undefined;
  const parsed = RelayedStartResult.safeParse(reply.result);
  if (!parsed.success) return undefined;
  try {
    const id = (JSON.parse(parsed.data.body) as { TransactionId?: unknown }).TransactionId;
    return typeof id === 'string' ? id.slice(0, 64) : undefined;
  } catch {
    return undefined;
  }
}
