/**
 * Two console instances on one PostgreSQL database and one shared-subscription group
 * (mosquitto), one killed with SIGKILL mid-ingest and started again: every event the machines
 * sent is stored exactly once. Run by `npm run console-test` with its PostgreSQL server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMosquitto } from '../../../rigs/broker/mosquitto-broker.js';
import { openTestStore } from '../support/store.js';
import { killMidIngest } from '../support/kill-run.js';

test(
  'two instances, one group, one killed mid-ingest: every event stored exactly once',
  { timeout: 400_000 },
  async (t) => {
    if ((process.env.QRVEND_CONSOLE_TEST_PG ?? '') === '') {
      t.skip('needs QRVEND_CONSOLE_TEST_PG (npm run console-test starts a PostgreSQL server)');
      return;
    }
    const broker = await startMosquitto({});
    const store = await openTestStore();
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-console-kill-'));
    try {
      const result = await killMidIngest(
        {
          brokerUrl: broker.url,
          protocol: '5',
          db: store.target,
          dir,
          subscription: 'shared',
          instances: 2,
          machines: 20,
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
      rmSync(dir, { recursive: true, force: true });
      await store.remove();
      await broker.close();
    }
  },
);
