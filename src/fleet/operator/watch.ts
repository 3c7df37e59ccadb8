/**
 * `qrvend fleet watch`: live sale and alarm events of the whole fleet, and machines coming online
 * or going away (their last will). Each event is shown once (a redelivery carries the same
 * eventId); malformed messages are counted and skipped. The retained statuses handed out at
 * subscription are the starting picture, not news: only later changes are reported.
 */
import type { MqttClient, IPublishPacket } from 'mqtt';
import type { FleetEvent, StatusMessage } from '../contract/index.js';
import { fleetFilters } from '../contract/index.js';
import { decodeFleetMessage, type Decoded } from './decode.js';
import { FleetView } from './fleet-view.js';

export interface WatchHandlers {
  onEvent(machineId: string, event: FleetEvent): void;
  onPresence?(machineId: string, status: StatusMessage): void;
  onBad?(message: Extract<Decoded, { kind: 'bad' }>): void;
}

export interface FleetWatch {
  view: FleetView;
  stop(options?: { keepSubscription?: boolean }): Promise<void>;
}

export type MessageListener = (topic: string, payload: Buffer, packet: IPublishPacket) => void;

/**
 * The watcher's message handler and the view it feeds, apart from any client: set it on a client
 * before it connects (connectFleet's beforeConnect) when a resumed session may deliver at once.
 */
export function createWatchListener(
  prefix: string,
  handlers: WatchHandlers,
): { view: FleetView; onMessage: MessageListener } {
  const view = new FleetView();
  const onMessage: MessageListener = (topic, payload, packet) => {
    const decoded = decodeFleetMessage(prefix, topic, payload);
    const applied = view.apply(decoded);
    if (decoded.kind === 'bad') {
      handlers.onBad?.(decoded);
    } else if (applied.kind === 'event' && !applied.duplicate && decoded.kind === 'event') {
      handlers.onEvent(decoded.machineId, applied.event);
    } else if (applied.kind === 'status' && !packet.retain && handlers.onPresence) {
      const now = applied.row.status;
      if (now !== null && (applied.previous === null || applied.previous.online !== now.online))
        handlers.onPresence(applied.row.machineId, now);
    }
  };
  return { view, onMessage };
}

export async function watchFleet(
  client: MqttClient,
  prefix: string,
  /**
   * What to do with each message: handlers, or a listener made by
   * createWatchListener (already set on the client or not).
   */
  source: WatchHandlers | { view: FleetView; onMessage: MessageListener },
  options: { share?: string } = {},
): Promise<FleetWatch> {
  const { view, onMessage } = 'onMessage' in source ? source : createWatchListener(prefix, source);
  if (!client.listeners('message').includes(onMessage as never)) client.on('message', onMessage);
  const filters = fleetFilters(prefix);
  // A shared subscription spreads the events over several consumers of one
  // group (MQTT 5 brokers, mosquitto 2 also for 3.1.1).
  const events = options.share ? `$share/${options.share}/${filters.events}` : filters.events;
  await client.subscribeAsync({ [events]: { qos: 1 }, [filters.status]: { qos: 1 } });
  return {
    view,
    async stop(options: { keepSubscription?: boolean } = {}) {
      client.off('message', onMessage);
      // A named session keeps its subscription on the broker, so events queue while it is away.
      if (!options.keepSubscription) await client.unsubscribeAsync([events, filters.status]).catch(() => undefined);
    },
  };
}
