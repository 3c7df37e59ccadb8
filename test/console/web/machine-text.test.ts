/**
 * Control and bidi characters a machine sends (docs/console.md, "Security choices"): NUL, ESC, the
 * C1 controls U+0085 and U+009B (a CSI on a terminal) and U+202E (right-to-left override, which
 * shows a txId or a detail reversed) reach no page raw; each shows as a visible escape, as the CLI
 * shows it (`\x1b`, `\u202e`). Through the real console: the machine's messages through the broker
 * into ingest, the pages over HTTP; NUL, which ingest now refuses, written to the SQLite file as an
 * older console could have stored it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { storeStatus } from '../../../src/console/store/ingest-queries.js';
import type { StatusMessage } from '../../../src/fleet/contract/index.js';
import { ADMIN, startConsoleApp } from '../support/console-app.js';
import { waitFor } from '../support/wait.js';
import { WebClient } from '../support/web-client.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

// One of each: ESC with a "clear the screen", C1 NEL, C1 CSI, the right-to-left override.
const HOSTILE = 'A\u001b[2JB\u0085C\u009b31mD\u202eE';
const SHOWN = 'A\\x1b[2JB\\x85C\\x9b31mD\\u202eE';
const RAW = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const AT = '2026-12-04T19:29:56.769Z';
const M = 'vm-text';

function status(machineId: string, text: string): StatusMessage {
  return {
    online: true,
    machineId,
    terminalId: `T-${text}`,
    uniQr: null,
    version: `1.0-${text}`.slice(0, 64),
    startedAt: AT,
    reader: 'enabled',
    readerDisabledRemotely: false,
    gateway: 'online',
    outbox: { pending: 1, dead: 0 },
    alarms: ['BOARD_SILENT'],
    acceptsRelayedStart: false,
    at: AT,
  };
}

test(
  'control and bidi characters from machines show as visible escapes on every page',
  {
    timeout: TEST_DEADLINE_MS,
  },
  async () => {
    const app = await startConsoleApp();
    try {
      const base = { at: AT, machineId: M };
      await app.publish(M, 'status', status(M, HOSTILE), true);
      await app.publish(M, 'events', {
        ...base,
        kind: 'alarm',
        eventId: 'a1',
        code: 'BOARD_SILENT',
        state: 'raised',
        detail: `detail ${HOSTILE}`,
      });
      await app.publish(M, 'events', {
        ...base,
        kind: 'sale',
        eventId: 's1',
        txId: `tx-${HOSTILE}`,
        flow: 'static',
        amount: '1.50',
        currency: 'EUR',
        products: [],
        closing: 'settlement',
        verdict: 'dead-letter',
      });
      await app.publish(M, 'events', {
        ...base,
        kind: 'audit',
        eventId: 'au1',
        auditId: 'A1',
        part: 0,
        parts: 1,
        raw: '',
        summary: {
          check: { ok: true },
          reconciliation: { status: 'mismatch', difference: 1, message: `audit ${HOSTILE}` },
        },
      });
      await app.publish(M, 'events', {
        ...base,
        kind: 'update',
        eventId: 'u1',
        version: '2.0.0',
        running: '1.0.0',
        state: 'waiting',
        rolloutId: `r-${HOSTILE}`,
        progress: null,
        detail: `update ${HOSTILE}`,
      });
      await app.waitStored(4);
      await waitFor('the status stored', () => app.running.ingest.counters.statuses >= 1);
      // NUL as a console before the ingest's text check could have stored it (SQLite holds it).
      await storeStatus(app.store.db, 'vm-nul', status('vm-nul', 'N\u0000L'), AT);

      const c = new WebClient(app.url);
      await c.login(ADMIN.name, ADMIN.password);
      const pages = [
        `/machines/${M}`,
        `/?q=${M}`,
        '/alarms?state=all',
        '/sales?from=2026-12-01&to=2026-12-31',
        '/audits',
        '/rollouts?version=2.0.0',
      ];
      for (const path of pages) {
        const r = await c.request(path);
        assert.equal(r.status, 200, path);
        assert.doesNotMatch(r.text, RAW, `${path} holds a raw control or bidi character`);
        assert.ok(r.text.includes(SHOWN), `${path} does not show the escapes: ${SHOWN}`);
      }
      const nul = await c.request('/machines/vm-nul');
      assert.doesNotMatch(nul.text, RAW);
      assert.ok(nul.text.includes('T-N\\x00L'), 'NUL not shown as \\x00');
    } finally {
      await app.close();
    }
  },
);
