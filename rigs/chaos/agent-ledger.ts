/**
 * Reads the daemon's own SQLite ledger, read-only, from outside the process. Right after a
 * SIGKILL the file holds exactly what the agent had committed when it died, which is how the
 * chaos run tells a vend the agent never learnt of (the physical window of design section 2)
 * from a vend it learnt of and then lost (a bug).
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';

export interface AgentTransaction {
  txId: string;
  flow: 'static' | 'dynamic';
  state: string;
  createdAtMs: number;
  /** Static: successful vends recorded (minor units); dynamic: the price when vended, else 0. */
  recordedSoldMinor: number;
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
                     ELSE (SELECT COALESCE(SUM(v.price_minor), 0) FROM vends v WHERE v.tx_id = t.tx_id AND v.state IN ('success', 'reset'))
                END AS recordedSoldMinor
           FROM transactions t WHERE t.created_at_ms >= ? ORDER BY t.created_at_ms, t.tx_id`,
      )
      .all(sinceMs) as AgentTransaction[];
    return rows;
  } finally {
    db.close();
  }
}

export function readAgentOutbox(path: string): AgentOutbox {
  const db = open(path);
  if (db === null) return { pending: 0, dead: 0, open: [] };
  try {
    const rows = db
      .prepare(`SELECT o.tx_id AS txId, o.op AS op, o.status AS status, o.attempts AS attempts, o.last_error AS lastError, t.state AS state
                  FROM outbox o JOIN transactions t ON t.tx_id = o.tx_id WHERE o.status != 'done' ORDER BY o.id`)
      .all() as Array<{ txId: string; op: string; status: string; attempts: number; lastError: string | null; state: string }>;
    return {
      pending: rows.filter((r) => r.status === 'pending').length,
      dead: rows.filter((r) => r.status === 'dead').length,
      open: rows.map((r) => `${r.op} ${r.txId} ${r.status} (tx ${r.state}, ${r.attempts} attempts, last error: ${r.lastError ?? 'none'})`),
    };
  } finally {
    db.close();
  }
}
