/**
 * Bad input to the console's pages (docs/console.md, "Pages"): a day that is no day and a machine
 * path that is not valid percent-encoding are the sender's mistakes, answered 400 with a message
 * naming the parameter, never 500, and never logged as the console's error (any viewer could
 * flood the log). Through the real console: HTTP on loopback, SQLite.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN, recordingLogger, startConsoleApp } from '../support/console-app.js';
import { WebClient } from '../support/web-client.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

// [path, the parameter its answer must name]
const BAD: [string, RegExp][] = [
  ['/sales?to=2026-13-01', /^refused: to: "2026-13-01" is not a day/],
  ['/sales.csv?to=2026-99-99', /^refused: to: "2026-99-99" is not a day/],
  ['/sales?to=0000-00-00', /^refused: to: "0000-00-00" is not a day/],
  ['/sales?from=2026-02-30', /^refused: from: "2026-02-30" is not a day/],
  ['/sales?from=yesterday', /^refused: from: "yesterday" is not a day/],
  ['/sales?from=2026-12-05&to=2026-12-01', /^refused: from: 2026-12-05 is after to/],
  ['/machines/%', /^refused: machine id .*percent-encoding/],
  ['/machines/%ZZ', /^refused: machine id .*percent-encoding/],
];

test(
  'bad days and malformed machine paths answer 400 naming the parameter, and log no error',
  {
    timeout: TEST_DEADLINE_MS,
  },
  async () => {
    const { log, lines } = recordingLogger('info');
    const app = await startConsoleApp({}, { log });
    try {
      const c = new WebClient(app.url);
      assert.equal((await c.login(ADMIN.name, ADMIN.password)).status, 303);
      for (const [path, answer] of BAD) {
        const r = await c.request(path);
        assert.equal(r.status, 400, `${path}: ${r.status} ${r.text}`);
        assert.match(r.text, answer, path);
      }
      // The good forms still answer.
      assert.equal((await c.request('/sales?from=2024-02-29&to=2024-03-01')).status, 200);
      assert.equal((await c.request('/sales.csv?to=2026-12-31')).status, 200);
      assert.equal((await c.request('/machines/no%20such')).status, 404);
      const errors = lines.filter((l) => /"level":"error"/.test(l));
      assert.deepEqual(errors, [], 'a bad request was logged as the console failing');
    } finally {
      await app.close();
    }
  },
);
