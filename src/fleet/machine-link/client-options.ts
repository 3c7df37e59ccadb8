/**
 * The fleet worker's MQTT client options, credentials aside (src/config/fleet-credentials.ts reads those files).
 */
import type { IClientOptions } from 'mqtt';
import type { QrvendConfig } from '../../config/schema.js';
import type { StatusMessage } from '../contract/messages.js';
import { maxPacketProperties } from '../packet-bound.js';

export function deviceClientOptions(
  fleet: QrvendConfig['fleet'],
  machineId: string,
  statusTopic: string,
  random: () => number = Math.random,
): IClientOptions {
  return {
    protocolVersion: fleet.protocolVersion,
    clientId: `qrvend-${machineId}`.slice(0, 128),
    clean: true,
    keepalive: fleet.keepaliveS,
    // A fleet that lost its broker must not come back in one wave: every machine waits its own while.
    reconnectPeriod: 1000 + Math.floor(random() * 1000),
    connectTimeout: 10_000,
    queueQoSZero: false,
    // Subscribed again by hand on every connect (clean session): one SUBSCRIBE, not two.
    resubscribe: false,
    will: {
      topic: statusTopic,
      payload: Buffer.from(JSON.stringify({ online: false } satisfies StatusMessage)),
      qos: 1,
      retain: true,
    },
    rejectUnauthorized: true,
    // MQTT 5: the broker never hands this worker a packet over the bound (docs/decisions/fleet-trust.md item 11).
    properties: maxPacketProperties(fleet.protocolVersion),
    // mqtt-packet's default caches a Buffer for each of the 65,536 packet ids at the first packet:
    // 6-7 MB of the fleet worker's heap for ever (BENCHMARKS.md, "Memory"), to save a 2-byte
    // allocation per packet on a link that sends a few packets a minute.
    writeCache: false,
  };
}
