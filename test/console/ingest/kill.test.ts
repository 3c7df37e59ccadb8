import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname } from 'node:path';
import { startAedesBroker } from '../../../rigs/broker/index.js';
import { openTestStore } from '../support/store.js';
import { killMidIngest } from '../support/kill-run.js';

test(
  'kill -9 of the console mid-ingest: after its restart every event is stored exactly once',
  { timeout: 300_000 },
  async () => {
    const broker = await startAedesBroker();
    const store = await openTestStore('sqlite');
    try {
      const result = await killMidIngest(
        {
          brokerUrl: broker.url,
          protocol: '4',
          db: store.target,
          dir: dirname(store.target),
          subscription: 'plain',
          instances: 1,
          machines: 10,
          eventsPerMachine: 100,
        },
        store.db,
      );
      assert.ok(
        result.storedAtKill < result.sent,
        `killed mid-ingest (${result.storedAtKill} of ${result.sent} stored then)`,
      );
      assert.deepEqual(
        { stored: result.stored, counted: result.counted },
        { stored: result.sent, counted: result.sent },
      );
    } finally {
      await store.remove();
      await broker.close();
    }
  },
);
