/**
 * A scaled-down fleet simulation (20 machines, 2 s) against mosquitto: every sale reaches the
 * operator's watch once, every cut machine's last will arrives, and the command round trips go
 * through the pluggable handlers (a canned `start` reply, as the relay's simulation will use).
 * mosquitto only (`npm run fleet-test`); the 1,000-machine run is `npm run fleet-sim`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const skip =
  process.env.QRVEND_TEST_BROKER === 'mosquitto'
    ? false
    : 'runs against mosquitto only: npm run fleet-test (QRVEND_TEST_BROKER=mosquitto)';

test(
  'fleet-sim, scaled down: all sales seen once, last wills seen, start answered by a plugged-in handler',
  { skip, timeout: TEST_DEADLINE_MS },
  async (t) => {
    const { runFleetSim } = await import('../../rigs/fleet/run.js');
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-fleet-sim-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const handlers = join(dir, 'handlers.mjs');
    writeFileSync(
      handlers,
      'export const handlers = { start: (args, { machineId }) => ({ ok: true, result: ' +
        "{ httpStatus: 200, contentType: 'application/json', body: JSON.stringify({ " +
        'machineId, integratorName: args.integratorName }) } }) };\n',
    );
    const r = await runFleetSim({
      machines: 20,
      seconds: 2,
      salesPerSecond: 25,
      healthIntervalS: 1,
      alarmsPerSecond: 2,
      pings: 5,
      crash: 3,
      cli: false,
      handlersModule: handlers,
      command: {
        name: 'start',
        args: { integratorName: 'wallet-a', body: '{}', deadlineAt: Date.now() + 60_000, client: '127.0.0.1' },
      },
    });
    assert.equal(r.connect.machines, 20);
    assert.equal(r.status.machines, 20);
    assert.equal(r.events.salesPublished, 50);
    assert.equal(r.events.salesAcked, 50);
    assert.equal(r.events.salesReceivedByOperator, 50);
    assert.equal(r.events.duplicatesSkipped, 0);
    assert.equal(r.events.malformed, 0);
    assert.equal(r.events.latencyMs.count, 50);
    assert.deepEqual([r.commands.command, r.commands.ok, r.commands.failed], ['start', 5, 0]);
    assert.deepEqual(r.lastWill, { machinesCut: 3, offlineSeenByOperator: 3 });
    assert.ok(r.deviceSide.bytesSentPerSaleEvent.payload! > 200);
    assert.ok(r.broker.rssEndMiB! > 0);
  },
);
