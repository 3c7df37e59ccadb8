/**
 * What every crash run must show (docs/decisions/ledger-and-outbox.md), said once for the short
 * run of `npm test` (test/reliability/crash.test.ts) and the long one of the slow tier
 * (test/reliability/crash.slow.test.ts): as many kills as asked and a restart after each, and at
 * the end the gateway simulator's ledger holds every approved authorization settled or cancelled
 * exactly once, paid QRs vended or voided exactly once, amounts equal to the vends the VMC
 * reported, no settlement without an approval, and an empty outbox.
 */
import assert from 'node:assert/strict';
import type { ChaosReport } from '../../../rigs/chaos/chaos.js';
import { formatReport } from '../../../rigs/chaos/report.js';

/** The named kill moments, and kills after a random delay (`killsByWhat` of the report). */
export const KILLS_BY_WHAT = [
  'after-start-approved',
  'after-c-start',
  'between-vend-approve-and-success',
  'after-vend-success',
  'after-session-end',
  'during-dynamic-poll',
  'after-payment-approval',
  'random delay',
] as const;

export function assertCrashRun(report: ChaosReport, kills: number): void {
  const text = formatReport(report);
  assert.ok(report.counters.kills >= kills, `only ${report.counters.kills} kills happened\n${text}`);
  assert.equal(report.counters.restarts, report.counters.kills, text);
  // Every named moment was hit at least once, and random delays too.
  for (const moment of KILLS_BY_WHAT) {
    assert.ok((report.counters.killsByWhat[moment] ?? 0) > 0, `no kill ${moment}\n${text}`);
  }
  assert.equal(report.incidents.length, 0, text);
  assert.equal(report.audit.lostMinor, 0, text);
  assert.deepEqual(report.audit.chargedTwice, [], text);
  assert.deepEqual(report.audit.unresolved, [], text);
  assert.equal(report.audit.chargedNotVendedMinor, 0, text);
  assert.deepEqual(report.audit.settledNeverApproved, [], text);
  assert.deepEqual(report.audit.orphans, [], text);
  assert.equal(report.audit.rejectedRequests, 0, text);
  assert.deepEqual(report.audit.outbox, { pending: 0, dead: 0, open: [] }, text);
  assert.deepEqual(report.audit.findings, [], text);
  // The sessions did sell something in both flows, so the amounts were really compared.
  assert.ok(report.audit.vendsDispensed > 0 && report.audit.chargedMinor > 0, text);
  assert.ok(report.ok, text);
}
