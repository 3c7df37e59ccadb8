/**
 * Reads the daemon's own SQLite ledger, read-only, from outside the process. Right after a
 * SIGKILL the file holds exactly what the agent had committed when it died, which is how the
 * chaos run tells a vend the agent never learnt of (the physical window of docs/decisions/sales-and-recovery.md)
 * from a vend it learnt of and then lost (a bug).
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { readJournal } from '../../src/ledger/vend-journal-reader.js';
import { isApproval, vendJournalPathFor, vendKey } from '../../src/ledger/vend-journal.js';
import type { ApprovalRecord, ResultRecord } from '../../src/ledger/vend-journal.js';
import { isChargedVend } from '../../src/ipc/vend-outcome.js';

export interface AgentTransaction {
  txId: string;
  flow: 'static' | 'dynamic';
  state: string;
  createdAtMs: number;
  /** Static: successful vends recorded (minor units); dynamic: the price when vended, else 0. */
  recordedSoldMinor: number;
  /** Of those, kept only by the vend journal (not yet in the ledger): minor units and vends. */
  journalOnly?: { minor: number; vends: number };
  /**
   * Not in recordedSoldMinor: vends the journal held approved with no result anywhere, charged at
   * the next start under MDB's reset rule (minor units and vends).
   */
  approvedOnly?: { minor: number; vends: number };
}

export interface AgentOutbox {
  pending: number;
  dead: number;
  /** The rows not delivered (for the report): transaction, operation, status, last error. */
  open: string[];
}

function open(path: string): Database.Database | null {
  if (!existsSync(path)) return null;
  // readonly: never checkpoints or changes the file the daemon will reopen.
  return new Database(path, { readonly: true, fileMustExist: true });
}

/** Every transaction created at or after `sinceMs`, with what it had recorded as sold. */
export function readAgentTransactions(path: string, sinceMs = 0): AgentTransaction[] {
  const db = open(path);
  if (db === null) return [];
  try {
    const rows = db
      .prepare(
        `SELECT t.tx_id AS txId, t.flow AS flow, t.state AS state, t.created_at_ms AS createdAtMs,
                CASE WHEN t.flow = 'dynamic'
                     THEN (CASE WHEN t.state = 'vended' THEN COALESCE(t.amount_minor, 0) ELSE 0 END)
                     ELSE (SELECT COALESCE(SUM(v.price_minor), 0) FROM vends v WHERE v.tx_id = t.tx_id AND v.state IN \
('success', 'reset'))
                END AS recordedSoldMinor
           FROM transactions t WHERE t.created_at_ms >= ? ORDER BY t.created_at_ms, t.tx_id`,
      )
      .all(sinceMs) as AgentTransaction[];
    return rows;
  } finally {
    db.close();
  }
}

/**
 * What the daemon had kept when it died: its ledger plus the charged results its vend journal held
 * (src/ledger/vend-journal.ts), which the next start records. A vend in both counts once. Apart:
 * the approvals the journal held with no result in the journal or the ledger, which the next start
 * charges as a reset after VEND APPROVED (MDB 4.2 7.4.7; docs/decisions/sales-and-recovery.md).
 */
export function readKeptAtKill(path: string, sinceMs: number): AgentTransaction[] {
  const txs = readAgentTransactions(path, sinceMs);
  const journal = readJournal(vendJournalPathFor(path)).records;
  if (journal.length === 0) return txs;
  const db = open(path);
  if (db === null) return txs;
  const charged = journal.filter((r): r is ResultRecord => !isApproval(r) && isChargedVend(r.outcome));
  const resulted = new Set(journal.filter((r) => !isApproval(r)).map(vendKey));
  const approvedOnly = journal.filter((r): r is ApprovalRecord => isApproval(r) && !resulted.has(vendKey(r)));
  try {
    const vendState = db.prepare('SELECT state FROM vends WHERE tx_id = ? AND seq = ?');
    const amount = db.prepare('SELECT amount_minor AS minor FROM transactions WHERE tx_id = ?');
    const soldSeqs = db.prepare(`SELECT seq FROM vends WHERE tx_id = ? AND state IN ('success', 'reset')`);
    return txs.map((t) => {
      let kept = t;
      const results = charged.filter((r) => r.tx === t.txId);
      const approvals = approvedOnly.filter((r) => r.tx === t.txId);
      if (t.flow === 'dynamic') {
        const minor = (amount.get(t.txId) as { minor: number | null } | undefined)?.minor ?? 0;
        if (t.recordedSoldMinor > 0) return t;
        if (results.length > 0) return { ...t, recordedSoldMinor: minor, journalOnly: { minor, vends: 1 } };
        const open = t.state === 'paid' || t.state === 'vend_approved';
        return approvals.length > 0 && open ? { ...t, approvedOnly: { minor, vends: 1 } } : t;
      }
      const inLedger = new Set((soldSeqs.all(t.txId) as Array<{ seq: number }>).map((r) => r.seq));
      const extra = new Map<number, number>();
      for (const r of results) {
        if (r.flow === 'static' && !inLedger.has(r.seq)) extra.set(r.seq, Math.round(r.price * 100));
      }
      if (extra.size > 0) {
        const minor = [...extra.values()].reduce((sum, m) => sum + m, 0);
        kept = { ...t, recordedSoldMinor: t.recordedSoldMinor + minor, journalOnly: { minor, vends: extra.size } };
      }
      const sessionOpen = t.state === 'authorized' || t.state === 'session_open';
      const charges = approvals.filter((r) => {
        if (r.flow !== 'static' || !sessionOpen) return false;
        const line = vendState.get(t.txId, r.seq) as { state: string } | undefined;
        return line === undefined || line.state === 'approved';
      });
      if (charges.length === 0) return kept;
      const minor = charges.reduce((sum, r) => sum + (r.flow === 'static' ? Math.round(r.price * 100) : 0), 0);
      return { ...kept, approvedOnly: { minor, vends: charges.length } };
    });
  } finally {
    db.close();
  }
}

export function readAgentOutbox(path: string): AgentOutbox {
  const db = open(path);
  if (db === null) return { pending: 0, dead: 0, open: [] };
  try {
    const rows = db
      .prepare(
        `SELECT o.tx_id AS txId, o.op AS op, o.status AS status, o.attempts AS attempts, o.last_error AS lastError, \
t.state AS state
                  FROM outbox o JOIN transactions t ON t.tx_id = o.tx_id WHERE o.status != 'done' ORDER BY o.id`,
      )
      .all() as Array<{
      txId: string;
      op: string;
      status: string;
      attempts: number;
      lastError: string | null;
      state: string;
    }>;
    return {
      pending: rows.filter((r) => r.status === 'pending').length,
      dead: rows.filter((r) => r.status === 'dead').length,
      open: rows.map(
        (r) =>
          `${r.op} ${r.txId} ${r.status} (tx ${r.state}, ${r.attempts} attempts, last error: ${r.lastError ?? 'none'})`,
      ),
    };
  } finally {
    db.close();
  }
}
