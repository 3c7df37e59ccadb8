/**
 * The short chaos run (docs/decisions/reliability-suite.md), in the slow tier (`npm run test:slow`,
 * docs/testing.md): the real daemon, both payment flows, a few hundred sessions while the gateway
 * answers 5xx, resets before and after its work, hangs past the client's timeout and sends garbage
 * and wrong-schema bodies, while the daemon is SIGKILLed now and then, the serial adapter is pulled
 * and replugged and the line carries noise. `npm run chaos` runs the full 1,000 sessions.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runChaos } from '../../rigs/chaos/chaos.js';
import { formatReport } from '../../rigs/chaos/report.js';
import { FAULT_KINDS } from '../../src/sim/gateway/index.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const SESSIONS = Number(process.env.QRVEND_CHAOS_SESSIONS ?? 250);
const SEED = Number(process.env.QRVEND_CHAOS_SEED ?? 777);

test(
  `chaos: ${SESSIONS} sessions under combined faults end with zero lost, doubled or unresolved sales`,
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const report = await runChaos({ profile: 'chaos', sessions: SESSIONS, maxMs: 75_000, seed: SEED });
    const text = formatReport(report);
    assert.ok(report.sessions.static > 0 && report.sessions.dynamic > 0, text);
    // Every fault kind really happened, so the figures below were earned under it.
    for (const kind of FAULT_KINDS) assert.ok((report.gatewayFaults[kind] ?? 0) > 0, `no ${kind} fault\n${text}`);
    assert.ok(report.counters.kills > 0, `no SIGKILL\n${text}`);
    assert.ok(report.counters.unplugs > 0, `no unplug\n${text}`);
    assert.ok(report.counters.noiseLines > 0, `no noise\n${text}`);
    assert.equal(report.incidents.length, 0, text);
    assert.equal(report.audit.lostMinor, 0, text);
    assert.deepEqual(report.audit.chargedTwice, [], text);
    assert.deepEqual(report.audit.unresolved, [], text);
    assert.equal(report.audit.chargedNotVendedMinor, 0, text);
    assert.deepEqual(report.audit.findings, [], text);
    assert.ok(report.ok, text);
  },
);
