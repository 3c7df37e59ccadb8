/**
 * The event feed as webhook deliveries (docs/console.md "The event feed"): for each endpoint with
 * room (nothing outstanding), the events after its cursor become one delivery, its body fixed
 * when queued, so every retry sends the same bytes under the same `webhook-id`.
 */
import type { Kysely } from 'kysely';
import { readFeed, type FeedEntry } from '../store/feed-queries.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { feedsToQueue, queueFeedBatch } from '../store/webhook-queries.js';
import { newMessageId } from './signing.js';

export interface FeedBatchLimits {
  /** Most events in one delivery. */
  events: number;
  /** Most bytes of event payloads in one delivery (past its first event). */
  bytes: number;
}

export const DEFAULT_FEED_BATCH: FeedBatchLimits = { events: 100, bytes: 256 * 1024 };

/** One event as the feed carries it: its position, whose and what it is, and the event as the machine sent it. */
export function feedItem(f: FeedEntry) {
  let event: unknown;
  try {
    event = JSON.parse(f.payload);
  } catch {
    event = null;
  }
  return {
    position: f.position,
    machineId: f.machineId,
    eventId: f.eventId,
    kind: f.kind,
    at: f.at,
    receivedAt: f.receivedAt,
    event,
  };
}

/** The body of a feed delivery (Standard Webhooks' type, timestamp and data). */
export function feedBody(after: number, entries: FeedEntry[], nowMs: number): string {
  const last = entries[entries.length - 1];
  return JSON.stringify({
    type: 'events',
    timestamp: new Date(nowMs).toISOString(),
    data: { after, cursor: last?.position ?? after, events: entries.map(feedItem) },
  });
}

/** Queues the next batch for every endpoint with room; returns how many were queued. */
export async function queueFeedBatches(
  db: Kysely<ConsoleDatabase>,
  limits: FeedBatchLimits,
  nowMs: number,
): Promise<number> {
  let queued = 0;
  for (const endpoint of await feedsToQueue(db)) {
    const from = endpoint.feed_cursor;
    const entries = await readFeed(db, from, limits.events, limits.bytes);
    const last = entries[entries.length - 1];
    if (last === undefined) continue;
    const delivery = { id: newMessageId(), channel: 'webhook', kind: 'events', owner: endpoint.owner };
    const payload = feedBody(from, entries, nowMs);
    if (await queueFeedBatch(db, endpoint.id, from, last.position, { ...delivery, payload }, nowMs)) queued++;
  }
  return queued;
}
