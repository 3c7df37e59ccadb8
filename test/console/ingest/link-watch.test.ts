import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/core/log.js';
import { MAX_RECONNECT_MS, nextReconnectMs, StoreHealth } from '../../../src/console/ingest/link-watch.js';

function capturedLog() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== ''))
        lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, log: createLogger({ name: 'console', destination, sync: true }) };
}

test('the reconnect wait doubles from reconnectMs and stops at its bound', () => {
  const waits: number[] = [];
  let wait = 1000;
  for (let i = 0; i < 8; i++) waits.push((wait = nextReconnectMs(wait, 1000)));
  assert.deepEqual(waits, [2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000]);
  assert.equal(nextReconnectMs(60_000, 60_000), 60_000, 'a reconnectMs over the bound is kept as it is');
  assert.equal(MAX_RECONNECT_MS, 30_000);
});

test('a database outage is said once when it starts and once when it ends, not once per message', () => {
  const { lines, log } = capturedLog();
  let now = 0;
  const store = new StoreHealth(log, () => now);
  store.committed();
  assert.equal(lines.length, 0, 'nothing to say while the database works');
  for (let i = 0; i < 5; i++) store.failed(new Error('connect ECONNREFUSED 127.0.0.1:5432'), 1000);
  assert.equal(store.down, true);
  now = 12_000;
  store.committed();
  store.committed();
  assert.equal(store.down, false);
  assert.equal(lines.length, 2);
  assert.equal(lines[0]!.code, 'CONSOLE_STORE_FAILED');
  assert.match(String(lines[0]!.msg), /console database unreachable .*nothing is acknowledged.*every 1 s to 30 s/);
  assert.match(String(lines[1]!.msg), /database reachable again after 12 s \(5 commits failed, none acknowledged\)/);
});
