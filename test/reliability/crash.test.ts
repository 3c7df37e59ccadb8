/**
 * The short crash run of `npm test` (docs/decisions/ledger-and-outbox.md): the real daemon is
 * killed with SIGKILL once at each named moment of each flow it belongs to (Static QR: right after
 * Start approved, after C,START, between vend approval and success, after vend success, right
 * after session end; Dynamic QR: during a poll, after payment approval, after vend success) and
 * once after a random delay in each flow, restarted, and its outbox drained; then the same audit
 * as the long run (test/reliability/support/crash-audit.ts). The moments are planned in turn
 * (runChaos's coverMoments), so a few sessions reach all of them; a planned moment a session does
 * not reach (a vend the VMC failed, a payment declined) is planned again.
 *
 * The long run, 80 kills at random points, is crash.slow.test.ts in the slow tier
 * (`npm run test:slow`, docs/testing.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KILL_TARGETS, runChaos } from '../../rigs/chaos/chaos.js';
import { formatReport } from '../../rigs/chaos/report.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';
import { assertCrashRun } from './support/crash-audit.js';

const SEED = Number(process.env.QRVEND_CRASH_SEED ?? 4242);

test(
  `SIGKILL at each moment of each flow (${KILL_TARGETS.length} kills): nothing lost, doubled or unresolved`,
  { timeout: TEST_DEADLINE_MS + KILL_TARGETS.length * 8_000 },
  async () => {
    const report = await runChaos({
      profile: 'crash',
      sessions: 0,
      minKills: KILL_TARGETS.length,
      coverMoments: true,
      // A bound that only stops a run that makes no progress (a restart takes up to ~7 s beside a CPU hog).
      maxMs: 60_000 + KILL_TARGETS.length * 12_000,
      seed: SEED,
    });
    const text = formatReport(report);
    for (const target of KILL_TARGETS) {
      assert.ok((report.killsByTarget[target] ?? 0) > 0, `no kill ${target}\n${text}`);
    }
    assertCrashRun(report, KILL_TARGETS.length);
  },
);
