/**
 * The chaos run's closing figures, as a person reads them (and RELIABILITY.md records them).
 */
import type { ChaosReport } from './chaos.js';

const major = (minor: number) => (minor / 100).toFixed(2);

export function formatReport(r: ChaosReport): string {
  const a = r.audit;
  const u = a.unrecordedAtCrash;
  const c = r.counters;
  const restartAvg = c.restarts > 0 ? Math.round(c.restartMsTotal / c.restarts) : 0;
  const kills = Object.entries(c.killsByWhat)
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const faults = Object.entries(r.gatewayFaults)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const lines = [
    `profile ${r.profile}, seed ${r.seed}, wall time ${(r.wallMs / 1000).toFixed(1)} s`,
    `sessions: ${r.sessions.total} (static ${r.sessions.static}, dynamic ${r.sessions.dynamic}); vends dispensed: ` +
      `${a.vendsDispensed}`,
    `faults: SIGKILL ${c.kills} (${kills || 'none'}); restarts ${c.restarts} (avg ${restartAvg} ms, max ` +
      `${c.restartMsMax} ms)`,
    `        gateway: ${faults}`,
    `        serial unplug/replug ${c.unplugs}; noise lines ${c.noiseLines}`,
    `dispensed ${major(a.dispensedMinor)}, charged ${major(a.chargedMinor)}`,
    `kept by the vend journal at a kill (not yet in the ledger): ${a.keptByJournal.vends} vends, ` +
      major(a.keptByJournal.minor),
    `approved at a kill with no result heard (charged at the restart, MDB 4.2 7.4.7): ` +
      `${a.approvedAtKill.vends} vends, ${major(a.approvedAtKill.minor)}`,
    `charged at a crash under MDB's reset rule (approved, the VMC failed the vend, its failure unheard): ` +
      `${a.chargedByResetRule.vends} vends, ${major(a.chargedByResetRule.minor)} ` +
      `(failed after the kill: ${a.chargedByResetRule.afterKill}; failure line on its way at the kill: ` +
      `${a.chargedByResetRule.vends - a.chargedByResetRule.afterKill})`,
    `unrecorded at crash (dispensed as the daemon died, never recorded, not charged): ${u.vends} vends, ` +
      major(u.minor) +
      ` (dispensed after the kill: ${u.afterKill}; result on its way at the kill: ${u.vends - u.afterKill})`,
    `sales lost: ${major(a.lostMinor)}`,
    `sales charged twice: ${a.chargedTwice.length}`,
    `approvals never resolved: ${a.unresolved.length}`,
    `vends charged that failed: ${major(a.chargedNotVendedMinor)}`,
    `settlements never approved: ${a.settledNeverApproved.length}; gateway records unknown to the daemon: ` +
      `${a.orphans.length}; requests rejected as invalid: ${a.rejectedRequests}`,
    `outbox at the end: ${a.outbox.pending} pending, ${a.outbox.dead} dead`,
    `incidents (stuck or unasked exits): ${r.incidents.length}`,
  ];
  for (const i of r.incidents.slice(0, 20)) lines.push(`  incident: ${i}`);
  for (const f of a.findings.slice(0, 20)) lines.push(`  finding: session ${f.session}: ${f.problem}`);
  lines.push(
    r.ok
      ? 'RESULT: OK'
      : `RESULT: FAILED${
          r.keptDir ? ` (ledger and config kept in ${r.dir})` : ' (run again with --keep-dir to keep the ledger)'
        }`,
  );
  return lines.join('\n');
}
