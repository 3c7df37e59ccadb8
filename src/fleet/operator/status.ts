/**
 * `qrvend fleet status`: subscribe to every machine's retained status and take what the broker
 * hands out. MQTT has no "end of retained messages" marker, so the picture is complete when no new
 * status has come for `settleMs` after the subscription was granted (or `expect` machines are
 * known, or `maxWaitMs` ran out). Durations on the monotonic clock.
 */
import type { MqttClient } from 'mqtt';
import { fleetFilters } from '../contract/index.js';
import { decodeFleetMessage } from './decode.js';
import { FleetView } from './fleet-view.js';

export interface CollectOptions {
  prefix: string;
  /** Quiet time after the last status that ends the collection. Default 300 ms. */
  settleMs?: number;
  /** Upper bound of the whole collection. Default 10 s. */
  maxWaitMs?: number;
  /** Stop as soon as this many machines are known (the fleet simulation knows its size). */
  expect?: number;
}

export interface Collected {
  view: FleetView;
  /** Subscribe to done, ms. */
  elapsedMs: number;
  /** Subscribe to the last status received, ms. */
  lastStatusMs: number;
}

export async function collectFleetStatus(client: MqttClient, options: CollectOptions): Promise<Collected> {
  const view = new FleetView();
  const settleMs = options.settleMs ?? 300;
  const maxWaitMs = options.maxWaitMs ?? 10_000;
  const t0 = performance.now();
  let last = t0;
  let lastStatus = t0;
  const onMessage = (topic: string, payload: Buffer) => {
    view.apply(decodeFleetMessage(options.prefix, topic, payload));
    last = performance.now();
    lastStatus = last;
  };
  client.on('message', onMessage);
  try {
    const filters = fleetFilters(options.prefix);
    await client.subscribeAsync({ [filters.status]: { qos: 1 } });
    last = Math.max(last, performance.now());
    for (;;) {
      const now = performance.now();
      if (options.expect !== undefined && view.machines.size >= options.expect) break;
      if (now - t0 >= maxWaitMs) break;
      if (options.expect === undefined && now - last >= settleMs) break;
      await new Promise((r) => setTimeout(r, Math.min(25, settleMs)));
    }
    await client.unsubscribeAsync(filters.status).catch(() => undefined);
    return { view, elapsedMs: performance.now() - t0, lastStatusMs: lastStatus - t0 };
  } finally {
    client.off('message', onMessage);
  }
}
