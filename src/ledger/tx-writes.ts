/**
 * The statements every transition shares: load a transaction, move it to a new state with its
 * event, enqueue an outbox row. They run inside a LedgerConnection.write(), never on their own.
 */
import { ErrorCodes, QrvendError } from '../core/errors.js';
import type { LedgerConnection } from './connection.js';
import { txFromRow, type TxRowData } from './rows.js';
import type { TxState } from './states.js';
import type { OutboxOperation, TxRecord } from './types.js';

export function findTx(conn: LedgerConnection, txId: string): TxRecord | null {
  const row = conn.statement('SELECT * FROM transactions WHERE tx_id = ?').get(txId) as TxRowData | undefined;
  return row === undefined ? null : txFromRow(row);
}

export function loadTx(conn: LedgerConnection, txId: string): TxRecord {
  const tx = findTx(conn, txId);
  if (tx === null) {
    throw new QrvendError(ErrorCodes.LEDGER_INVALID_TRANSITION, `transaction ${txId} is not in the ledger`, {
      hint: 'a payment flow referred to a transaction it never recorded; this is a bug',
      details: { txId },
    });
  }
  return tx;
}

/** Extends a transaction row's event range by one new event (bound twice: its id, its id). */
const EVENT_RANGE_SETS = 'first_event_id = COALESCE(first_event_id, ?), last_event_id = ?';

export function appendEvent(
  conn: LedgerConnection,
  txId: string,
  atMs: number,
  kind: string,
  from: TxState | null,
  to: TxState | null,
  detail: Record<string, unknown> | null,
): void {
  const id = insertEvent(conn, txId, atMs, kind, from, to, detail);
  // The log has no index by transaction (schema 5: one b-tree less per commit); the transaction's
  // row says where its events lie instead.
  conn.statement(`UPDATE transactions SET ${EVENT_RANGE_SETS} WHERE tx_id = ?`).run(id, id, txId);
}

/** The log's row alone; its id for the transaction row's event range (EVENT_RANGE_SETS). */
function insertEvent(
  conn: LedgerConnection,
  txId: string,
  atMs: number,
  kind: string,
  from: TxState | null,
  to: TxState | null,
  detail: Record<string, unknown> | null,
): number | bigint {
  return conn
    .statement('INSERT INTO events (tx_id, at_ms, kind, from_state, to_state, detail) VALUES (?, ?, ?, ?, ?, ?)')
    .run(txId, atMs, kind, from, to, detail === null ? null : JSON.stringify(detail)).lastInsertRowid;
}

/**
 * A transaction's events, oldest first, as SQL over `t` (its row): the ids from its first to its
 * last event, then its own among them (other transactions' events may lie in between).
 */
export const EVENTS_OF_TX = 'events e ON e.id BETWEEN t.first_event_id AND t.last_event_id AND e.tx_id = t.tx_id';

/** Column changes a transition may make besides the state. */
export interface TxColumns {
  amount_minor?: number | null;
  auth_amount_minor?: number | null;
  payment_info?: string | null;
  qr_data?: string | null;
  decline_code?: number | null;
  machine_au_time?: string | null;
  age_limit?: number | null;
}

const SETTABLE = new Set([
  'amount_minor',
  'auth_amount_minor',
  'payment_info',
  'qr_data',
  'decline_code',
  'machine_au_time',
  'age_limit',
]);

export function moveTx(
  conn: LedgerConnection,
  tx: TxRecord,
  to: TxState,
  atMs: number,
  kind: string,
  detail: Record<string, unknown> | null,
  columns: TxColumns = {},
): void {
  const names = Object.keys(columns).filter((k) => SETTABLE.has(k));
  const sets = ['state = ?', 'updated_at_ms = ?', ...names.map((n) => `${n} = ?`), EVENT_RANGE_SETS].join(', ');
  const values = names.map((n) => columns[n as keyof TxColumns] ?? null);
  // The event first, so the row's move and its event range are one UPDATE, not two of the same row.
  const eventId = insertEvent(conn, tx.txId, atMs, kind, tx.state, to, detail);
  conn.statement(`UPDATE transactions SET ${sets} WHERE tx_id = ?`).run(to, atMs, ...values, eventId, eventId, tx.txId);
}

export function enqueue(conn: LedgerConnection, txId: string, op: OutboxOperation, body: string, atMs: number): number {
  const info = conn
    .statement(
      `INSERT INTO outbox (tx_id, op, body, status, enqueued_at_ms, window_started_at_ms, attempts, next_attempt_at_ms)
       VALUES (?, ?, ?, 'pending', ?, ?, 0, ?)`,
    )
    .run(txId, op, body, atMs, atMs, atMs);
  return Number(info.lastInsertRowid);
}

export function refused(txId: string, reason: string): QrvendError {
  return new QrvendError(ErrorCodes.LEDGER_INVALID_TRANSITION, `transaction ${txId}: ${reason}`, {
    hint:
      'the payment flow asked for a step the ledger does not allow from here; this is a bug, the ledger was left ' +
      'unchanged',
    details: { txId },
  });
}
