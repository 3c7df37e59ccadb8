/**
 * The outbox's rows as the drainer, the health report and `qrvend outbox` see them. Rows are
 * written by the ledger's transitions (in the same SQLite transaction as the state change); here
 * they are picked, marked delivered, rescheduled, dead-lettered, retried by hand and pruned.
 */
import { ErrorCodes, QrvendError } from '../core/errors.js';
import type { LedgerConnection } from './connection.js';
import { outboxFromRow, type OutboxRowData } from './rows.js';
import { CLOSED_STATES, checkTransition } from './states.js';
import { appendEvent, EVENTS_OF_TX, findTx, moveTx } from './tx-writes.js';
import type { OutboxCounts, OutboxRow, OutboxStatus } from './types.js';
import type { FleetEventLog, SaleClosing } from './fleet-events.js';

const CLOSING_OF: Record<OutboxRow['op'], SaleClosing> = { Settlement: 'settlement', Cancel: 'cancel', Void: 'void' };

/**
 * A row may go when it is pending and no earlier row of the same TransactionId is still pending
 * or dead: requests of one transaction reach the gateway in the order they were recorded.
 */
const ELIGIBLE = `
  o.status = 'pending'
  AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.tx_id = o.tx_id AND p.id < o.id AND p.status != 'done')
  AND o.tx_id NOT IN (SELECT value FROM json_each(?))`;

const CLOSED_FOR_PRUNING = [...CLOSED_STATES].filter((s) => s !== 'dead');

/**
 * How long a used TransactionId is remembered after retention pruned its transaction: 400 days,
 * whatever store.retentionDays (longer than any replay window a wallet or gateway keeps, and an
 * id costs a few dozen bytes). docs/payments.md and docs/security.md state the guarantee.
 */
export const USED_ID_KEEP_MS = 400 * 24 * 3_600_000;

export interface ListOptions {
  status?: OutboxStatus;
  limit: number;
}

export class LedgerOutbox {
  constructor(
    private readonly conn: LedgerConnection,
    private readonly now: () => number,
    /** Sale events for the fleet link, written with the change that closes a payment. */
    private readonly fleet: FleetEventLog | null = null,
  ) {}

  /** Rows due at `nowMs`, oldest due first, skipping transactions that already have a request in flight. */
  due(nowMs: number, limit: number, inFlightTxIds: readonly string[]): OutboxRow[] {
    return this.conn.read(() =>
      (
        this.conn
          .statement(
            `SELECT o.* FROM outbox o WHERE ${ELIGIBLE} AND o.next_attempt_at_ms <= ? ORDER BY o.next_attempt_at_ms, ` +
              `o.id LIMIT ?`,
          )
          .all(JSON.stringify(inFlightTxIds), nowMs, limit) as OutboxRowData[]
      ).map(outboxFromRow),
    );
  }

  /** When the next eligible row falls due (null: nothing pending outside the in-flight transactions). */
  /**
   * The wall clock stepped by `stepMs` (docs/decisions/hardening.md item 6): pending rows keep their place in time,
   * measured as durations, so a forward step does not end a retry window early and a backward
   * step does not push the next attempt hours away.
   */
  rebase(stepMs: number): number {
    return this.conn.write(
      () =>
        this.conn
          .statement(
            `UPDATE outbox SET next_attempt_at_ms = next_attempt_at_ms + ?, window_started_at_ms = ` +
              `window_started_at_ms + ? WHERE status = 'pending'`,
          )
          .run(stepMs, stepMs).changes,
    );
  }

  /**
   * At start: a step that happened while the daemon was down cannot be measured, but a due time
   * beyond the longest backoff, or a window that starts in the future, can only come from the wall
   * clock having gone back: those are pulled in to now.
   */
  clampFuture(nowMs: number, maxDelayMs: number): number {
    return this.conn.write(
      () =>
        this.conn
          .statement(
            `UPDATE outbox SET next_attempt_at_ms = MIN(next_attempt_at_ms, ?), window_started_at_ms = \
MIN(window_started_at_ms, ?)
             WHERE status = 'pending' AND (next_attempt_at_ms > ? OR window_started_at_ms > ?)`,
          )
          .run(nowMs, nowMs, nowMs + maxDelayMs, nowMs).changes,
    );
  }

  nextDueAtMs(inFlightTxIds: readonly string[]): number | null {
    return this.conn.read(() => {
      const row = this.conn
        .statement(`SELECT MIN(o.next_attempt_at_ms) AS at FROM outbox o WHERE ${ELIGIBLE}`)
        .get(JSON.stringify(inFlightTxIds)) as {
        at: number | null;
      };
      return row.at;
    });
  }

  get(id: number): OutboxRow | null {
    return this.conn.read(() => {
      const row = this.conn.statement('SELECT * FROM outbox WHERE id = ?').get(id) as OutboxRowData | undefined;
      return row === undefined ? null : outboxFromRow(row);
    });
  }

  /** Newest first. */
  list(options: ListOptions): OutboxRow[] {
    return this.conn.read(() => {
      const rows =
        options.status === undefined
          ? this.conn.statement('SELECT * FROM outbox ORDER BY id DESC LIMIT ?').all(options.limit)
          : this.conn
              .statement('SELECT * FROM outbox WHERE status = ? ORDER BY id DESC LIMIT ?')
              .all(options.status, options.limit);
      return (rows as OutboxRowData[]).map(outboxFromRow);
    });
  }

  counts(): OutboxCounts {
    return this.conn.read(() => {
      const row = this.conn
        .statement(
          `SELECT SUM(status = 'pending') AS pending, SUM(status = 'dead') AS dead,
                  MIN(CASE WHEN status = 'pending' THEN enqueued_at_ms END) AS oldest
           FROM outbox WHERE status != 'done'`,
        )
        .get() as { pending: number | null; dead: number | null; oldest: number | null };
      return { pending: row.pending ?? 0, dead: row.dead ?? 0, oldestPendingAtMs: row.oldest };
    });
  }

  /** The gateway approved the request: the row is done and its transaction settled, cancelled or voided. */
  markDelivered(row: OutboxRow, nowMs: number): void {
    this.conn.write(() => {
      this.conn
        .statement(
          `UPDATE outbox SET status = 'done', done_at_ms = ?, attempts = attempts + 1, last_error = NULL, last_code ` +
            `= NULL WHERE id = ?`,
        )
        .run(nowMs, row.id);
      const tx = findTx(this.conn, row.txId);
      if (tx === null) return;
      const check = checkTransition(tx.flow, tx.state, 'delivered', row.op);
      if (check.kind === 'apply') {
        moveTx(this.conn, tx, check.to, nowMs, 'outbox.delivered', { outboxId: row.id, op: row.op });
        this.fleet?.recordSaleInTransaction({ ...tx, state: check.to }, CLOSING_OF[row.op], 'accepted', nowMs);
      } else
        appendEvent(this.conn, tx.txId, nowMs, 'outbox.delivered', tx.state, tx.state, {
          outboxId: row.id,
          op: row.op,
        });
    });
    this.fleet?.flush();
  }

  /** A retryable failure: count it and set the next attempt. */
  reschedule(row: OutboxRow, nowMs: number, nextAttemptAtMs: number, error: string, code: number | null): void {
    this.conn.write(() => {
      this.conn
        .statement(
          'UPDATE outbox SET attempts = attempts + 1, next_attempt_at_ms = ?, last_error = ?, last_code = ? WHERE id ' +
            '= ? AND status = ?',
        )
        .run(nextAttemptAtMs, error, code, row.id, 'pending');
      appendEvent(this.conn, row.txId, nowMs, 'outbox.retry-scheduled', null, null, {
        outboxId: row.id,
        op: row.op,
        error,
        code,
        nextAttemptAtMs,
      });
    });
  }

  /** Given up: kept as dead for manual reconciliation, its transaction marked dead. */
  deadLetter(row: OutboxRow, nowMs: number, error: string, code: number | null): void {
    this.conn.write(() => {
      this.conn
        .statement(
          `UPDATE outbox SET status = 'dead', dead_at_ms = ?, attempts = attempts + 1, last_error = ?, last_code = ? ` +
            `WHERE id = ?`,
        )
        .run(nowMs, error, code, row.id);
      const tx = findTx(this.conn, row.txId);
      if (tx === null) return;
      const check = checkTransition(tx.flow, tx.state, 'deadLettered');
      const detail = { outboxId: row.id, op: row.op, error, code };
      if (check.kind === 'apply') {
        moveTx(this.conn, tx, 'dead', nowMs, 'outbox.dead', detail);
        this.fleet?.recordSaleInTransaction({ ...tx, state: 'dead' }, CLOSING_OF[row.op], 'dead-letter', nowMs);
      } else appendEvent(this.conn, tx.txId, nowMs, 'outbox.dead', tx.state, tx.state, detail);
    });
    this.fleet?.flush();
  }

  /** A technician's retry of a dead row: pending again, with a fresh retry window from now. */
  retryDead(id: number): OutboxRow {
    const nowMs = this.now();
    this.conn.write(() => {
      const row = this.conn.statement('SELECT * FROM outbox WHERE id = ?').get(id) as OutboxRowData | undefined;
      if (row === undefined) {
        throw new QrvendError(ErrorCodes.OUTBOX_NOT_FOUND, `outbox row ${id} does not exist`, {
          hint: 'list the rows with `qrvend outbox --dead`',
        });
      }
      if (row.status !== 'dead') {
        throw new QrvendError(
          ErrorCodes.CLI_USAGE,
          `outbox row ${id} is ${row.status}, not dead; only dead rows can be retried by hand`,
          {
            hint: 'pending rows are retried automatically; done rows were delivered',
          },
        );
      }
      this.conn
        .statement(
          `UPDATE outbox SET status = 'pending', dead_at_ms = NULL, attempts = 0, window_started_at_ms = ?, ` +
            `next_attempt_at_ms = ? WHERE id = ?`,
        )
        .run(nowMs, nowMs, id);
      const tx = findTx(this.conn, row.tx_id);
      if (tx === null) return;
      const check = checkTransition(tx.flow, tx.state, 'manualRetry', row.op);
      const detail = { outboxId: id, op: row.op };
      if (check.kind === 'apply') moveTx(this.conn, tx, check.to, nowMs, 'outbox.manual-retry', detail);
      else appendEvent(this.conn, tx.txId, nowMs, 'outbox.manual-retry', tx.state, tx.state, detail);
    });
    return this.get(id)!;
  }

  /**
   * Retention: delivered rows older than `retentionMs` go, and so do closed transactions (with their
   * vends and events) that have no outbox row left. Dead rows and open transactions stay.
   */
  prune(nowMs: number, retentionMs: number): { outboxRows: number; transactions: number } {
    const cutoff = nowMs - retentionMs;
    return this.conn.write(() => {
      const outboxRows = this.conn
        .statement(`DELETE FROM outbox WHERE status = 'done' AND done_at_ms < ?`)
        .run(cutoff).changes;
      const stale = `SELECT tx_id FROM transactions t WHERE t.state IN (SELECT value FROM json_each(?)) AND \
t.updated_at_ms < ?
                     AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.tx_id = t.tx_id)`;
      const states = JSON.stringify(CLOSED_FOR_PRUNING);
      // The id outlives its history: a replayed Start must still get 996 (USED_ID_KEEP_MS).
      this.conn
        .statement(
          `INSERT OR REPLACE INTO used_tx_ids (tx_id, last_used_at_ms) SELECT tx_id, updated_at_ms FROM transactions ` +
            `WHERE tx_id IN (${stale})`,
        )
        .run(states, cutoff);
      this.conn
        .statement(`DELETE FROM used_tx_ids WHERE last_used_at_ms < ?`)
        .run(nowMs - Math.max(USED_ID_KEEP_MS, retentionMs));
      this.conn.statement(`DELETE FROM vends WHERE tx_id IN (${stale})`).run(states, cutoff);
      this.conn
        .statement(
          `DELETE FROM events WHERE id IN (SELECT e.id FROM transactions t JOIN ${EVENTS_OF_TX} WHERE t.tx_id IN ` +
            `(${stale}))`,
        )
        .run(states, cutoff);
      const transactions = this.conn
        .statement(`DELETE FROM transactions WHERE tx_id IN (${stale})`)
        .run(states, cutoff).changes;
      this.conn.statement('DELETE FROM cash_sales WHERE at_ms < ?').run(cutoff);
      return { outboxRows, transactions };
    });
  }
}
