/**
 * The chaos audit: holds each session's vends (what the VMC simulator dispensed) against exactly
 * the gateway records that session produced (by its transactions in the daemon's ledger), and
 * checks the gateway simulator's ledger as a whole.
 *
 * The one allowance is the physical window of docs/decisions/sales-and-recovery.md: when the daemon is killed after
 * the VMC dispensed but before the daemon kept that result, it never learns of the vend and the
 * consumer is not charged. What the daemon kept is its ledger and its vend journal (the machine
 * loop's record of results not yet in the ledger, taken over at the next start). Such a vend is
 * counted as "unrecorded at crash", never as lost, only when all of these hold:
 *   - the daemon was SIGKILLed during that session;
 *   - neither the ledger nor the vend journal, read right after the kill, holds the vend as sold;
 *   - the VMC's success line was written at most UNRECORDED_WINDOW_MS before the kill (the line
 *     was still on its way to the daemon), or after it (the machine dispensed a vend it had
 *     approved while the reader was dead: no reader hears that result).
 * Anything else missing from the gateway is lost; a vend the journal kept must be charged.
 *
 * Its mirror (docs/decisions/sales-and-recovery.md): the journal also keeps each approval, written
 * just before C,VEND goes to the board, and the next start charges an approval with no result in
 * the journal or the ledger, because a reset after VEND APPROVED is a sale (MDB 4.2 7.4.7). When
 * the VMC failed that vend (its failure line unread by the dead process, or written after the kill),
 * the consumer is charged for a vend that failed. Such a vend is counted as "charged at a crash
 * under MDB's reset rule", never inside chargedNotVended, only under the same conditions: a kill
 * during the session; the approval journaled and no result in the journal or the ledger at the
 * kill; the VMC's failure line written at most UNRECORDED_WINDOW_MS before the kill, or after it.
 * Anything else charged above what was dispensed stays a finding.
 */
import type { LedgerView, TxRecord } from '../../src/sim/gateway/index.js';
import { owedVend, type SimSessionRecord } from '../../src/sim/vmc/index.js';
import { checkSales, type SaleCheck } from '../../src/sim/checker.js';
import type { AgentOutbox, AgentTransaction } from './agent-ledger.js';
import type { Attempt, VendSuccessMark } from './harness.js';

/** Longest plausible time from c,VEND,SUCCESS on the wire to its ledger commit on a loaded 2-core box. */
export const UNRECORDED_WINDOW_MS = 2_000;

export interface AuditFinding {
  session: number;
  problem: string;
}

export interface Audit {
  sessions: number;
  vendsDispensed: number;
  dispensedMinor: number;
  chargedMinor: number;
  /** Dispensed and recorded (or dispensed long before a kill) but not charged. Must be 0. */
  lostMinor: number;
  /** Transactions with more than one accepted Settlement/Cancel/Void, or a conflicting repeat. Must be empty. */
  chargedTwice: string[];
  /** Approved authorizations / paid QRs without their accepted closing. Must be empty. */
  unresolved: string[];
  /** Charged for vends that failed or never happened (minor units). Must be 0. */
  chargedNotVendedMinor: number;
  /** Settlements accepted for a transaction whose Authorization was never approved. Must be empty. */
  settledNeverApproved: string[];
  /** Gateway transactions the daemon's ledger does not know. Must be empty. */
  orphans: string[];
  /** Requests the gateway refused as invalid (a malformed body is a bug). Must be 0. */
  rejectedRequests: number;
  /** The daemon's outbox at the end: nothing pending, nothing dead-lettered. */
  outbox: AgentOutbox;
  /**
   * The physical window: dispensed while the daemon died, never recorded, not charged; `afterKill`
   * of those vends were dispensed after the kill (their result reached no reader).
   */
  unrecordedAtCrash: { vends: number; minor: number; afterKill: number };
  /** Vends not in the ledger at a kill but kept by the vend journal (each one must be charged). */
  keptByJournal: { vends: number; minor: number };
  /** Approvals the journal held with no result at a kill (charged at the next start under MDB's reset rule). */
  approvedAtKill: { vends: number; minor: number };
  /** Of those, vends the VMC failed inside the crash window: charged under MDB's reset rule, not dispensed. */
  chargedByResetRule: { vends: number; minor: number; afterKill: number };
  /** The plain sale checker over the whole run (its "lost" equals unrecordedAtCrash + lostMinor). */
  aggregate: SaleCheck;
  findings: AuditFinding[];
  ok: boolean;
}

function chargedFor(tx: TxRecord | undefined): number {
  if (tx === undefined) return 0;
  if (tx.flow === 'static') return tx.settlement?.verdict === 'Approved' ? Math.round(tx.settlement.amount * 100) : 0;
  return tx.state === 'paid' ? Math.round((tx.qr?.amount ?? 0) * 100) : 0;
}

const closings = (tx: TxRecord) => tx.accepted.Settlement + tx.accepted.Cancel + tx.accepted.Void;

/** What the daemon had kept for a session when it was killed (agent-ledger.ts, readKeptAtKill). */
function keptAtKill(committed: readonly AgentTransaction[]) {
  const kept = { recorded: 0, journal: { vends: 0, minor: 0 }, approved: { vends: 0, minor: 0 } };
  for (const t of committed) {
    kept.recorded += t.recordedSoldMinor;
    kept.journal.vends += t.journalOnly?.vends ?? 0;
    kept.journal.minor += t.journalOnly?.minor ?? 0;
    kept.approved.vends += t.approvedOnly?.vends ?? 0;
    kept.approved.minor += t.approvedOnly?.minor ?? 0;
  }
  return kept;
}

/**
 * The last vends of `marks` that make up exactly `minor`, when every one of them came at most
 * UNRECORDED_WINDOW_MS before the kill or after it; null otherwise.
 */
function inCrashWindow(marks: readonly VendSuccessMark[], killAtMs: number, minor: number) {
  let left = minor;
  let count = 0;
  let afterKill = 0;
  for (const mark of [...marks].reverse()) {
    if (left <= 0) break;
    if (!mark.afterKill && mark.atMs < killAtMs - UNRECORDED_WINDOW_MS) return null;
    left -= mark.amountMinor;
    count += 1;
    if (mark.afterKill) afterKill += 1;
  }
  return left === 0 ? { count, afterKill } : null;
}

export function audit(input: {
  attempts: readonly Attempt[];
  vmc: readonly SimSessionRecord[];
  gateway: LedgerView;
  agentTxs: readonly AgentTransaction[];
  outbox: AgentOutbox;
}): Audit {
  const { attempts, vmc, gateway, agentTxs, outbox } = input;
  const findings: AuditFinding[] = [];
  let dispensedMinor = 0;
  let chargedMinor = 0;
  let lostMinor = 0;
  let chargedNotVendedMinor = 0;
  let vendsDispensed = 0;
  const unrecorded = { vends: 0, minor: 0, afterKill: 0 };
  const keptByJournal = { vends: 0, minor: 0 };
  const approvedAtKill = { vends: 0, minor: 0 };
  const resetRule = { vends: 0, minor: 0, afterKill: 0 };
  const known = new Set(agentTxs.map((t) => t.txId));

  attempts.forEach((a, i) => {
    const next = attempts[i + 1];
    const sessions = vmc.slice(a.vmcRecordsBefore, next ? next.vmcRecordsBefore : vmc.length);
    const txs = agentTxs.filter(
      (t) => t.createdAtMs >= a.startedAtMs && (next === undefined || t.createdAtMs < next.startedAtMs),
    );
    let dispensed = 0;
    for (const s of sessions) {
      for (const v of s.vends) {
        if (!owedVend(v)) continue;
        vendsDispensed += 1;
        dispensed += Math.round((v.approved ?? 0) * 100);
      }
    }
    const charged = txs.reduce((sum, t) => sum + chargedFor(gateway.transactions[t.txId]), 0);
    dispensedMinor += dispensed;
    chargedMinor += charged;

    let owed = dispensed;
    if (a.kill !== null) {
      const kept = keptAtKill(a.kill.committed);
      keptByJournal.vends += kept.journal.vends;
      keptByJournal.minor += kept.journal.minor;
      approvedAtKill.vends += kept.approved.vends;
      approvedAtKill.minor += kept.approved.minor;
      // What the daemon owes by its own account: the sold results it kept, and the approvals with none.
      const due = kept.recorded + kept.approved.minor;
      if (kept.recorded > dispensed) {
        const problem =
          `the ledger held ${kept.recorded} minor units sold at the kill, ` + `the VMC dispensed only ${dispensed}`;
        findings.push({ session: a.n, problem });
      } else if (due < dispensed) {
        // The missing vends are the last ones dispensed (results are committed in order).
        const window = inCrashWindow(a.successes, a.kill.atMs, dispensed - due);
        if (window === null) {
          const problem =
            `${dispensed - due} minor units dispensed but not recorded at the kill, ` + 'outside the crash window';
          findings.push({ session: a.n, problem });
        } else {
          unrecorded.vends += window.count;
          unrecorded.afterKill += window.afterKill;
          unrecorded.minor += dispensed - due;
          owed = due;
        }
      } else if (due > dispensed) {
        // Approvals charged for vends the VMC failed: the failures must be the last ones, in the window.
        const window = inCrashWindow(a.failures, a.kill.atMs, due - dispensed);
        if (window === null) {
          const problem =
            `${due - dispensed} minor units approved at the kill but not dispensed, ` + 'outside the crash window';
          findings.push({ session: a.n, problem });
        } else {
          resetRule.vends += window.count;
          resetRule.afterKill += window.afterKill;
          resetRule.minor += due - dispensed;
          owed = due;
        }
      }
    }
    if (charged < owed) {
      lostMinor += owed - charged;
      findings.push({ session: a.n, problem: `lost: owed ${owed}, charged ${charged} (${a.steps.join('; ')})` });
    } else if (charged > owed) {
      chargedNotVendedMinor += charged - owed;
      findings.push({ session: a.n, problem: `charged ${charged} for ${owed} dispensed (${a.steps.join('; ')})` });
    }
  });

  const chargedTwice: string[] = [];
  const unresolved: string[] = [];
  const settledNeverApproved: string[] = [];
  const orphans: string[] = [];
  const agentState = new Map(agentTxs.map((t) => [t.txId, t.state]));
  for (const tx of Object.values(gateway.transactions)) {
    if (!known.has(tx.transactionId)) orphans.push(tx.transactionId);
    if (closings(tx) > 1 || tx.conflicts.length > 0) chargedTwice.push(tx.transactionId);
    if (tx.flow === 'static') {
      if (tx.authorization?.verdict === 'Approved' && closings(tx) === 0) unresolved.push(tx.transactionId);
      if (tx.settlement?.verdict === 'Approved' && tx.authorization?.verdict !== 'Approved')
        settledNeverApproved.push(tx.transactionId);
    } else if (tx.state === 'paid' && agentState.get(tx.transactionId) !== 'vended') {
      unresolved.push(tx.transactionId); // paid, not vended by the daemon's account, and no Void accepted
    }
  }
  for (const id of chargedTwice) findings.push({ session: 0, problem: `charged twice or conflicting closings: ${id}` });
  for (const id of unresolved) findings.push({ session: 0, problem: `approval never resolved: ${id}` });
  for (const id of settledNeverApproved)
    findings.push({ session: 0, problem: `settled without an approved authorization: ${id}` });
  for (const id of orphans)
    findings.push({ session: 0, problem: `gateway transaction unknown to the daemon's ledger: ${id}` });
  const rejectedRequests = gateway.summary.rejected;
  for (const r of gateway.rejected)
    findings.push({
      session: 0,
      problem: `gateway rejected ${r.op} ${r.transactionId ?? ''}: ${r.code} ${r.member} ${r.message}`,
    });
  if (outbox.pending > 0 || outbox.dead > 0)
    findings.push({ session: 0, problem: `outbox not drained: ${outbox.open.join('; ')}` });

  const aggregate = checkSales(vmc, gateway);
  const ok =
    lostMinor === 0 &&
    chargedNotVendedMinor === 0 &&
    chargedTwice.length === 0 &&
    unresolved.length === 0 &&
    settledNeverApproved.length === 0 &&
    orphans.length === 0 &&
    rejectedRequests === 0 &&
    outbox.pending === 0 &&
    outbox.dead === 0 &&
    findings.length === 0 &&
    // Cross-check with the plain checker: the only gaps it may see are the crash window's.
    aggregate.lostMinor - aggregate.chargedNotVendedMinor === unrecorded.minor - resetRule.minor;
  return {
    sessions: attempts.length,
    vendsDispensed,
    dispensedMinor,
    chargedMinor,
    lostMinor,
    chargedTwice,
    unresolved,
    chargedNotVendedMinor,
    settledNeverApproved,
    orphans,
    rejectedRequests,
    outbox,
    unrecordedAtCrash: unrecorded,
    keptByJournal,
    approvedAtKill,
    chargedByResetRule: resetRule,
    aggregate,
    findings,
    ok,
  };
}
