/**
 * The vend lines of a static session (the `vends` table): a vend approved locally, then its
 * outcome. Each function runs inside the ledger's write (Ledger.recordVendApproved and
 * recordVendResult, src/ledger/ledger.ts) and is safe to repeat, like every ledger transition.
 */
import type { LedgerConnection } from './connection.js';
import { toMinor } from './money.js';
import { vendFromRow, type VendRowData } from './rows.js';
import { appendEvent, loadTx, refused } from './tx-writes.js';
import type { VendLine, VendLineState } from './types.js';

function vendRowOf(conn: LedgerConnection, txId: string, seq: number): VendRowData | undefined {
  return conn.statement('SELECT * FROM vends WHERE tx_id = ? AND seq = ?').get(txId, seq) as VendRowData | undefined;
}

/** Inserts the approved vend; the same vend again returns it, another item or price is refused. */
export function insertVendApproved(
  conn: LedgerConnection,
  at: () => number,
  txId: string,
  vend: { seq: number; item: number; price: number },
): VendLine {
  const tx = loadTx(conn, txId);
  const priceMinor = toMinor(vend.price, tx.decimalPlaces, 'vend price');
  const existing = vendRowOf(conn, txId, vend.seq);
  if (existing !== undefined) {
    if (existing.item !== vend.item || existing.price_minor !== priceMinor) {
      throw refused(txId, `vend ${vend.seq} was already recorded with another item or price`);
    }
    return vendFromRow(existing, tx.decimalPlaces);
  }
  if (tx.state !== 'session_open') {
    throw refused(txId, `a vend needs state session_open, the transaction is ${tx.state}`);
  }
  const now = at();
  conn
    .statement(
      `INSERT INTO vends (tx_id, seq, item, price_minor, state, created_at_ms, updated_at_ms)
       VALUES (?, ?, ?, ?, 'approved', ?, ?)`,
    )
    .run(txId, vend.seq, vend.item, priceMinor, now, now);
  const detail = { seq: vend.seq, item: vend.item, price: vend.price };
  appendEvent(conn, txId, now, 'vend.approved', tx.state, tx.state, detail);
  return vendFromRow(vendRowOf(conn, txId, vend.seq)!, tx.decimalPlaces);
}

/** Sets the outcome of an approved vend; the same outcome again changes nothing, another is refused. */
export function updateVendResult(
  conn: LedgerConnection,
  at: () => number,
  txId: string,
  seq: number,
  outcome: Exclude<VendLineState, 'approved'>,
  detail: string | null,
): VendLine {
  const tx = loadTx(conn, txId);
  const existing = vendRowOf(conn, txId, seq);
  if (existing === undefined) throw refused(txId, `vend ${seq} was never approved`);
  if (existing.state === outcome) return vendFromRow(existing, tx.decimalPlaces);
  if (existing.state !== 'approved') throw refused(txId, `vend ${seq} already ended as ${existing.state}`);
  if (tx.state !== 'session_open') {
    throw refused(txId, `a vend result needs state session_open, the transaction is ${tx.state}`);
  }
  const now = at();
  const update = conn.statement('UPDATE vends SET state = ?, updated_at_ms = ? WHERE tx_id = ? AND seq = ?');
  update.run(outcome, now, txId, seq);
  appendEvent(conn, txId, now, `vend.${outcome}`, tx.state, tx.state, { seq, detail });
  return vendFromRow(vendRowOf(conn, txId, seq)!, tx.decimalPlaces);
}
