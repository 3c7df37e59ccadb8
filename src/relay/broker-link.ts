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
import { connect, type IPublishPacket, type MqttClient } from 'mqtt';
import type { Logger } from '../core/log.js';
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
import type { RelayConfig } from './config.js';
import { MachineDirectory } from './directory.js';
import type { Registry } from './registry.js';
import { setNoDelayOn } from '../fleet/no-delay.js';
import { boundInboundPackets } from '../fleet/packet-bound.js';
import { RepeatedLog } from '../core/log-limiter.js';
import { checkMachineReply, type MachineRefusal } from '../trust/machine-sig.js';
import { mqttOptionsOf } from './broker-options.js';

export { mqttOptionsOf } from './broker-options.js';

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

/** The link's state: the client, the Starts waiting for their reply, and the counters stats() reports. */
class RelayBrokerLink {
  readonly clientId: string;
  readonly directory: MachineDirectory;
  readonly client: MqttClient;
  private readonly broker: RelayConfig['broker'];
  private readonly prefix: string;
  private readonly pending = new Map<string, Pending>();
  private repliesUnmatched = 0;
  private repliesInvalid = 0;
  private readonly repliesRefused: Partial<Record<MachineRefusal, number>> = {};
  private closed = false;
  // Reconnects are tried every second while the broker is away: one error line per outage, not per try.
  private errorLogged = false;
  private packetsTooLarge = 0;
  private readonly blog: Logger;
  private readonly refusalLog: RepeatedLog;

  constructor(
    private readonly config: RelayConfig,
    private readonly registry: () => Registry,
    log: Logger,
  ) {
    const broker = config.broker;
    this.broker = broker;
    this.prefix = broker.topicPrefix;
    this.clientId = broker.clientId ?? `qrvend-relay-${randomBytes(6).toString('hex')}`;
    this.directory = new MachineDirectory(config.maxMachines, registry, log.child({ component: 'directory' }));
    // Connected by hand, so the packet bound is in place on the first socket too.
    this.client = connect(broker.url, { ...mqttOptionsOf(broker, this.clientId), manualConnect: true });
    boundInboundPackets(this.client, broker.protocolVersion, () => void (this.packetsTooLarge += 1));
    this.client.connect();
    this.blog = log.child({ component: 'broker' });
    this.follow();
    this.refusalLog = new RepeatedLog({
      intervalMs: 60_000,
      write: (fields, repeated) =>
        log.warn(
          { event: 'relay.reply.refused', ...fields, repeated },
          `reply not believed (${String(fields.reason)}): ${String(fields.why)}; the Start waits for the machine's own`,
        ),
    });
  }

  /** The client's events: connection state, statuses and replies. */
  private follow(): void {
    const { client, broker, blog } = this;
    client.on('connect', () => this.onConnect());
    client.on('close', () => {
      // Nothing can answer while the link is down (clean session: replies are not kept for us).
      for (const [id, p] of this.pending) this.settle(id, p, { kind: 'broker-down' });
    });
    client.on('offline', () => {
      if (!this.closed)
        blog.warn({ url: broker.url }, 'fleet broker unreachable: Starts are answered Declined 30 until it is back');
    });
    client.on('error', (err) => {
      if (this.errorLogged) return;
      this.errorLogged = true;
      blog.warn(
        { err: err.message, code: (err as { code?: unknown }).code },
        'fleet broker connection error (retrying every second; logged once until connected)',
      );
    });
    client.on('message', (topic: string, payload: Buffer, packet: IPublishPacket) => {
      if (payload.length > MAX_PAYLOAD_BYTES) return;
      const parsed = parseTopic(this.prefix, topic);
      if (parsed?.kind === 'status') this.directory.update(parsed.machineId, payload);
      else if (parsed?.kind === 'replies') this.onReply(parsed.machineId, payload, packet);
    });
  }

  private onConnect(): void {
    const { client, broker, prefix } = this;
    // A Start is one small message each way: Nagle's algorithm against delayed ACKs would add up
    // to 40 ms per hop. (TLS and WebSocket streams carry the socket underneath; set it where there is one.)
    setNoDelayOn(client.stream);
    this.errorLogged = false;
    this.blog.info(
      { url: broker.url, protocolVersion: broker.protocolVersion, clientId: this.clientId },
      'connected to the fleet broker',
    );
    // A new subscription re-delivers every retained status, which brings the map up to date
    // (kept meanwhile, so a reconnect does not turn known machines into Declined 50 for a moment).
    client.subscribe([fleetFilters(prefix).status, `${prefix}/+/replies`], { qos: 1 }, (err) => {
      if (err && !this.closed)
        this.blog.error({ err: err.message }, 'subscribing to machine status and replies failed');
    });
  }

  private onReply(topicMachineId: string, payload: Buffer, packet: IPublishPacket): void {
    let reply: CommandReply;
    let raw: Record<string, unknown>;
    try {
      raw = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
      const checked = CommandReply.safeParse(raw);
      if (!checked.success) throw new Error('schema');
      reply = checked.data;
    } catch {
      this.repliesInvalid += 1;
      return;
    }
    // The machine's acknowledgement of a confirmation: nobody waits for it.
    if (reply.command === 'start.confirm') return;
    const fromProperties = packet.properties?.correlationData;
    const correlationId = fromProperties !== undefined ? fromProperties.toString('utf8') : reply.correlationId;
    const waiting = correlationId === null ? undefined : this.pending.get(correlationId);
    if (
      correlationId === null ||
      waiting === undefined ||
      reply.command !== 'start' ||
      waiting.machineId !== reply.machineId ||
      waiting.machineId !== topicMachineId
    ) {
      // Too late (we already answered 30), another replica's or an operator's, or not from the machine asked.
      this.repliesUnmatched += 1;
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
      this.registry().keysOf(topicMachineId),
      Date.now(),
    );
    if (!signed.ok) {
      this.repliesRefused[signed.reason] = (this.repliesRefused[signed.reason] ?? 0) + 1;
      this.refusalLog.add({
        machineId: topicMachineId,
        reason: signed.reason,
        why: signed.message.slice(0, 200),
        txId: transactionIdOf(reply),
      });
      return;
    }
    this.settleSigned(correlationId, waiting, reply);
  }

  /** A signed reply to a waiting Start: the machine's refusal, or its HTTP answer when readable. */
  private settleSigned(correlationId: string, waiting: Pending, reply: CommandReply): void {
    if (!reply.ok) return this.settle(correlationId, waiting, { kind: 'refused', code: reply.error.code });
    const result = RelayedStartResult.safeParse(reply.result);
    if (!result.success || !/^[\x20-\x7e]+$/.test(result.data.contentType)) {
      this.repliesInvalid += 1;
      return this.settle(correlationId, waiting, { kind: 'refused', code: 'BAD_RESULT' });
    }
    this.settle(correlationId, waiting, { kind: 'answer', result: result.data });
  }

  private settle(id: string, p: Pending, outcome: RequestOutcome): void {
    if (this.pending.get(id) !== p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    p.resolve(outcome);
  }

  request(machineId: string, args: RelayedStartArgs, waitMs: number): Promise<RequestOutcome> {
    const { client, broker } = this;
    if (!client.connected) return Promise.resolve({ kind: 'broker-down' });
    if (this.pending.size >= this.config.maxInFlight) return Promise.resolve({ kind: 'overloaded' });
    const correlationId = randomBytes(12).toString('hex');
    const topics = machineTopics(this.prefix, machineId);
    const replyTo = topics.replies;
    return new Promise<RequestOutcome>((resolve) => {
      const entry: Pending = {
        machineId,
        resolve,
        timer: setTimeout(() => this.settle(correlationId, entry, { kind: 'timeout' }), Math.max(0, waitMs)),
      };
      this.pending.set(correlationId, entry);
      const body = JSON.stringify({ replyTo, correlationId, args });
      if (Buffer.byteLength(body) > MAX_PAYLOAD_BYTES) return this.settle(correlationId, entry, { kind: 'too-large' });
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
        if (err) this.settle(correlationId, entry, { kind: 'broker-down' });
      });
    });
  }

  confirm(machineId: string, args: StartConfirmArgs): void {
    if (!this.client.connected) return;
    const topics = machineTopics(this.prefix, machineId);
    // Expires with the machine's grace: a confirmation held longer by a broker finds nothing held.
    const properties = this.broker.protocolVersion === 5 ? { properties: { messageExpiryInterval: 5 } } : {};
    this.client.publish(
      topics.command('start.confirm'),
      JSON.stringify({ args }),
      { qos: 1, retain: false, ...properties },
      (err) => {
        if (err && !this.closed)
          this.blog.warn(
            { machineId, txId: args.txId, err: err.message },
            'start.confirm not published: the machine will drop the Start',
          );
      },
    );
  }

  stats(): BrokerLinkStats {
    const { directory } = this;
    return {
      connected: this.client.connected,
      machines: directory.size,
      online: directory.onlineCount,
      inFlight: this.pending.size,
      statusDropped: { ...directory.dropped },
      repliesUnmatched: this.repliesUnmatched,
      repliesInvalid: this.repliesInvalid,
      statusRefused: { ...directory.statusRefused },
      repliesRefused: { ...this.repliesRefused },
      packetsTooLarge: this.packetsTooLarge,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const [id, p] of this.pending) this.settle(id, p, { kind: 'broker-down' });
    await new Promise<void>((resolve) => this.client.end(true, {}, () => resolve()));
  }
}

export function connectBrokerLink(config: RelayConfig, registry: () => Registry, log: Logger): BrokerLink {
  const link = new RelayBrokerLink(config, registry, log);
  return {
    directory: link.directory,
    clientId: link.clientId,
    get connected() {
      return link.client.connected;
    },
    request: (machineId, args, waitMs) => link.request(machineId, args, waitMs),
    confirm: (machineId, args) => link.confirm(machineId, args),
    stats: () => link.stats(),
    close: () => link.close(),
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
