/**
 * A read-only look at a ledger file for `qrvend doctor`: never creates, migrates or repairs it,
 * so it is safe beside a running daemon and on a file that may be damaged.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { closeQuietly, integrityOf } from './db.js';
import { describeError } from './sqlite-errors.js';

export interface LedgerInspection {
  /** `ok`, or what integrity_check (or opening the file) reported. */
  integrity: 'ok' | string;
  /** PRAGMA user_version; 0 when the file is not a ledger (or not readable). */
  schemaVersion: number;
  pending: number;
  dead: number;
  /** ISO 8601 enqueue time of the oldest pending outbox row. */
  oldestPendingAt: string | null;
}

export function inspectLedger(path: string): LedgerInspection {
  if (!existsSync(path)) {
    throw new QrvendError(ErrorCodes.LEDGER_NOT_FOUND, `no ledger at ${path}`, {
      hint: 'check store.path in the configuration; qrvend run creates the ledger on its first start',
    });
  }
  let db: Database.Database | null = null;
  const result: LedgerInspection = { integrity: 'ok', schemaVersion: 0, pending: 0, dead: 0, oldestPendingAt: null };
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 2000');
    result.integrity = integrityOf(db);
    result.schemaVersion = db.pragma('user_version', { simple: true }) as number;
    const hasOutbox =
      db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'outbox'`).get() !== undefined;
    if (hasOutbox) {
      const row = db
        .prepare(
          `SELECT SUM(status = 'pending') AS pending, SUM(status = 'dead') AS dead,
                  MIN(CASE WHEN status = 'pending' THEN enqueued_at_ms END) AS oldest
           FROM outbox WHERE status != 'done'`,
        )
        .get() as { pending: number | null; dead: number | null; oldest: number | null };
      result.pending = row.pending ?? 0;
      result.dead = row.dead ?? 0;
      result.oldestPendingAt = row.oldest === null ? null : new Date(row.oldest).toISOString();
    }
  } catch (err) {
    result.integrity = result.integrity === 'ok' ? describeError(err) : `${result.integrity}; ${describeError(err)}`;
  } finally {
    closeQuietly(db);
  }
  return result;
}
