/**
 * The event feed's positions (src/console/store/feed-queries.ts): in the order events were stored,
 * redeliveries left out, events stored before the feed existed numbered by the migration, and on
 * PostgreSQL, with two instances committing at once, a reader never sees a position appear below
 * one it has already read.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { FleetEvent } from '../../../src/fleet/contract/index.js';
import { storeEventBatch } from '../../../src/console/store/event-batch.js';
import { feedHead, readFeed } from '../../../src/console/store/feed-queries.js';
import type { IncomingEvent } from '../../../src/console/store/ingest-queries.js';
import { openStore } from '../../../src/console/store/open.js';
import { DATABASES, openDatabase, stopDatabases } from './databases.js';
import { CHILD_DEADLINE_MS } from '../../support/deadlines.js';

after(stopDatabases);

function alarm(eventId: string, machineId: string): IncomingEvent {
  const event = {
    kind: 'alarm',
    eventId,
    at: '2026-11-27T09:30:00.000Z',
    machineId,
    code: 'READER_OFFLINE',
    state: 'raised',
    detail: null,
  } as FleetEvent;
  return { machineId, event, receivedAt: new Date().toISOString(), raw: JSON.stringify(event) };
}

for (const kind of DATABASES) {
  test(
    `${kind}: the feed holds each stored event once, in the order stored`,
    { timeout: CHILD_DEADLINE_MS },
    async (t) => {
      const store = await openDatabase(t, kind);
      if (store === null) return;
      try {
        // Within a batch the order they came, not the key order (b before a).
        await storeEventBatch(store.db, [alarm('b', 'vm-2'), alarm('a', 'vm-1'), alarm('b', 'vm-2')]);
        await storeEventBatch(store.db, [alarm('a', 'vm-1'), alarm('c', 'vm-1')]);
        const feed = await readFeed(store.db, 0, 100);
        assert.deepEqual(
          feed.map((f) => [f.position, f.machineId, f.eventId, f.kind]),
          [
            [1, 'vm-2', 'b', 'alarm'],
            [2, 'vm-1', 'a', 'alarm'],
            [3, 'vm-1', 'c', 'alarm'],
          ],
        );
        assert.equal(JSON.parse(feed[2]!.payload).eventId, 'c');
        assert.deepEqual(
          (await readFeed(store.db, 1, 1)).map((f) => f.eventId),
          ['a'],
        );
        assert.equal(await feedHead(store.db), 3);
      } finally {
        await store.remove();
      }
    },
  );
}

test(
  'postgres: two instances committing at once never show a reader a position below one it read',
  {
    timeout: CHILD_DEADLINE_MS,
  },
  async (t) => {
    const first = await openDatabase(t, 'postgres');
    if (first === null) return;
    const second = await openStore(first.target);
    try {
      const perInstance = 40;
      const seen: number[] = [];
      let done = false;
      const reader = (async () => {
        let after = 0;
        while (!done || after < perInstance * 2 * 3) {
          const page = await readFeed(first.db, after, 1000);
          for (const f of page) {
            // Each read continues exactly where the last one stopped: no position skipped and filled later.
            assert.equal(f.position, after + 1);
            after = f.position;
            seen.push(f.position);
          }
          await new Promise((r) => setTimeout(r, 2));
        }
      })();
      const writer = (db: typeof first.db, prefix: string) =>
        (async () => {
          for (let i = 0; i < perInstance; i++) {
            const batch = [0, 1, 2].map((j) => alarm(`${prefix}-${i}-${j}`, `vm-${j}`));
            await storeEventBatch(db, batch);
          }
        })();
      await Promise.all([writer(first.db, 'x'), writer(second.db, 'y')]);
      done = true;
      await reader;
      assert.equal(seen.length, perInstance * 2 * 3);
      const keys = await first.db
        .selectFrom('feed')
        .select(sql<number>`count(distinct event_id)`.as('n'))
        .execute();
      assert.equal(Number(keys[0]!.n), perInstance * 2 * 3);
    } finally {
      await second.close();
      await first.remove();
    }
  },
);

test(
  'sqlite: the migration numbers the events stored before the feed, by when they came',
  {
    timeout: CHILD_DEADLINE_MS,
  },
  async (t) => {
    const store = await openDatabase(t, 'sqlite');
    if (store === null) return;
    try {
      // As a database from before migration 0007 was: events, no feed.
      await sql`delete from feed`.execute(store.db);
      await sql`delete from console_migrations where name = '0007-reach'`.execute(store.db);
      for (const table of ['feed', 'feed_head', 'alert_rules', 'alert_states', 'webhook_endpoints', 'deliveries']) {
        await sql`drop table ${sql.table(table)}`.execute(store.db);
      }
      for (const table of ['delivery_attempts', 'api_tokens', 'api_rate', 'leases']) {
        await sql`drop table ${sql.table(table)}`.execute(store.db);
      }
      await sql`drop index sales_api`.execute(store.db);
      await sql`drop index sales_api_machine`.execute(store.db);
      await sql`alter table users drop column email`.execute(store.db);
      await sql`alter table machines drop column online_since`.execute(store.db);
      for (const [id, at] of [
        ['late', '2026-11-27T10:00:00.000Z'],
        ['early', '2026-11-27T09:00:00.000Z'],
      ] as const) {
        await store.db
          .insertInto('events')
          .values({ machine_id: 'vm-1', event_id: id, kind: 'alarm', at, received_at: at, payload: '{}' })
          .execute();
      }
      await store.close();
      const again = await openStore(store.target);
      try {
        assert.deepEqual(
          (await readFeed(again.db, 0, 10)).map((f) => [f.position, f.eventId]),
          [
            [1, 'early'],
            [2, 'late'],
          ],
        );
        assert.equal(await feedHead(again.db), 2);
      } finally {
        await again.close();
      }
    } finally {
      await store.remove().catch(() => undefined);
    }
  },
);
