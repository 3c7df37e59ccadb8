/**
 * The operator's side in the end-to-end tests: a plain MQTT client on the test broker that records
 * what one machine publishes (status, events, replies) and sends it commands. Speaks the
 * protocol the broker speaks (MQTT 5 when it can, 3.1.1 for aedes).
 */
import { randomUUID } from 'node:crypto';
import { connect, type MqttClient } from 'mqtt';
import { machineTopics, type CommandName } from '../../../../src/fleet/contract/topics.js';
import type { CommandReply, FleetEvent } from '../../../../src/fleet/contract/messages.js';
import type { TestBroker } from '../../../../rigs/broker/index.js';
import { until } from '../../../../rigs/rig.js';
import type { CommandSigner } from '../../../../src/fleet/operator/command.js';
import { signCommand } from '../../support/operator-keys.js';

export const PREFIX = 'qrvend-test';

export interface FleetWatcher {
  readonly events: FleetEvent[];
  /** Every status message, in order (retained ones included). */
  readonly statuses: Array<Record<string, unknown>>;
  /** Every health message. */
  readonly health: Array<Record<string, any>>;
  /** Every reply seen on the default reply topic. */
  readonly replies: CommandReply[];
  /** Publishes raw bytes on cmd/<name> (no waiting). */
  publishRaw(name: string, payload: Buffer | string): void;
  /** Signed with the watcher's key when it has one (startWatcher's `signer`), unless `unsigned`. */
  command(name: CommandName | string, args?: unknown, timeoutMs?: number, unsigned?: boolean): Promise<CommandReply>;
  /** Publishes raw bytes on cmd/<name> with a correlationId and waits for the reply. */
  commandRaw(name: string, payload: Buffer | string, correlationId: string, timeoutMs?: number): Promise<CommandReply>;
  /** MQTT 5 only: the reply topic and correlation data as packet properties, none in the body. */
  commandV5(
    name: string,
    args: unknown,
    replyTopic: string,
    timeoutMs?: number,
  ): Promise<{ reply: CommandReply; correlationData: Buffer | null }>;
  waitForEvent(match: (e: FleetEvent) => boolean, timeoutMs: number, what: string): Promise<FleetEvent>;
  lastStatus(): Record<string, unknown> | null;
  close(): Promise<void>;
}

export function protocolFor(broker: TestBroker): 4 | 5 {
  return broker.protocolVersions.includes(5) ? 5 : 4;
}

export async function startWatcher(
  url: string,
  protocolVersion: 4 | 5,
  machineId: string,
  signer?: CommandSigner,
): Promise<FleetWatcher> {
  const topics = machineTopics(PREFIX, machineId);
  const client: MqttClient = connect(url, {
    protocolVersion,
    clientId: `watcher-${randomUUID().slice(0, 8)}`,
    reconnectPeriod: 200,
    clean: true,
  });
  const events: FleetEvent[] = [];
  const statuses: Array<Record<string, unknown>> = [];
  const replies = new Map<string, (r: CommandReply) => void>();
  const allReplies: CommandReply[] = [];
  const health: Array<Record<string, any>> = [];
  client.on('message', (topic, payload) => {
    let body: any;
    try {
      body = JSON.parse(payload.toString('utf8'));
    } catch {
      return;
    }
    if (topic === topics.events) events.push(body as FleetEvent);
    else if (topic === topics.status) statuses.push(body as Record<string, unknown>);
    else if (topic === topics.health) health.push(body as Record<string, any>);
    else if (topic === topics.replies) {
      allReplies.push(body as CommandReply);
      if (typeof body.correlationId === 'string') replies.get(body.correlationId)?.(body as CommandReply);
    }
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`watcher: no connection to ${url}`)), 5_000);
    client.once('connect', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  await client.subscribeAsync([topics.status, topics.events, topics.replies, topics.health], { qos: 1 });

  const commandRaw = (name: string, payload: Buffer | string, correlationId: string, timeoutMs = 10_000) =>
    new Promise<CommandReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        replies.delete(correlationId);
        reject(new Error(`no reply to ${name} within ${timeoutMs} ms`));
      }, timeoutMs);
      replies.set(correlationId, (r) => {
        clearTimeout(timer);
        replies.delete(correlationId);
        resolve(r);
      });
      client.publish(`${PREFIX}/${machineId}/cmd/${name}`, payload, { qos: 1 });
    });

  return {
    events,
    statuses,
    replies: allReplies,
    health,
    publishRaw: (name, payload) => void client.publish(`${PREFIX}/${machineId}/cmd/${name}`, payload, { qos: 1 }),
    command(name, args = {}, timeoutMs = 10_000, unsigned = false) {
      const correlationId = randomUUID();
      const signature = signer !== undefined && !unsigned ? signCommand(signer, machineId, name, args) : undefined;
      return commandRaw(
        name,
        JSON.stringify({ replyTo: topics.replies, correlationId, args, signature }),
        correlationId,
        timeoutMs,
      );
    },
    commandRaw,
    async waitForEvent(match, timeoutMs, what) {
      await until(() => events.some(match), timeoutMs, what);
      return events.find(match)!;
    },
    async commandV5(name, args, replyTopic, timeoutMs = 10_000) {
      const correlationData = Buffer.from(randomUUID());
      await client.subscribeAsync(replyTopic, { qos: 1 });
      return new Promise((resolve, reject) => {
        const onMessage = (topic: string, payload: Buffer, packet: { properties?: { correlationData?: Buffer } }) => {
          if (topic !== replyTopic) return;
          const data = packet.properties?.correlationData ?? null;
          if (data === null || !data.equals(correlationData)) return;
          clearTimeout(timer);
          client.off('message', onMessage);
          resolve({ reply: JSON.parse(payload.toString('utf8')) as CommandReply, correlationData: data });
        };
        const timer = setTimeout(() => {
          client.off('message', onMessage);
          reject(new Error(`no MQTT 5 reply to ${name} within ${timeoutMs} ms`));
        }, timeoutMs);
        client.on('message', onMessage);
        const signature = signer !== undefined ? signCommand(signer, machineId, name, args) : undefined;
        client.publish(`${PREFIX}/${machineId}/cmd/${name}`, JSON.stringify({ args, signature }), {
          qos: 1,
          properties: { responseTopic: replyTopic, correlationData },
        });
      });
    },
    lastStatus: () => statuses[statuses.length - 1] ?? null,
    close: () => client.endAsync(true),
  };
}
