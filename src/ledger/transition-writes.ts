/**
 * How the ledger's transitions write (docs/decisions/sales-and-recovery.md): a new transaction, a
 * checked move with its event and outbox row, and the checks a closing session needs. Kept apart
 * from ledger.ts so the class reads as the list of transitions it offers.
 */
import { ErrorCodes, QrvendError } from '../core/errors.js';
import type { LedgerConnection } from './connection.js';
import type { VendRowData } from './rows.js';
import { checkTransition, type Flow, type TransitionName, type TxState } from './states.js';
import { appendEvent, enqueue, findTx, loadTx, moveTx, refused, type TxColumns } from './tx-writes.js';
import type { InsertResult, OutboxOperation, TransitionResult, TxRecord } from './types.js';

/** What a closing request repeats from the authorization (docs/decisions/gateway-interface.md). */
export interface AuthorizationFacts {
  /** MachineAuTime as sent (ddMMyyHHmmss). */
  machineAuTime: string;
  /** BasicInfo.AgeLimitation as sent, or null. */
  ageLimit: number | null;
}

/** Facts not given (callers that predate them): closing bodies then use the transaction's creation time. */
export const NOT_RECORDED: { machineAuTime: string | null; ageLimit: number | null } = {
  machineAuTime: null,
  ageLimit: null,
};

/** GatewayOutcome bodies are JSON objects; a flow may hand over the parsed object or its exact text. */
export type JsonObjectOrText = string | Record<string, unknown>;

/** What one transition writes besides the move itself. */
export interface Plan {
  detail?: Record<string, unknown>;
  columns?: TxColumns;
  outbox?: { op: OutboxOperation; body: string };
}

export function objectText(value: JsonObjectOrText, what: string): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new QrvendError(ErrorCodes.INTERNAL, `${what} given to the ledger is not a JSON object`, {
      hint: 'this is a bug in the payment flow',
    });
  }
  return text;
}

export function insertTx(
  conn: LedgerConnection,
  now: () => number,
  decimalPlaces: number,
  row: { txId: string; flow: Flow; state: TxState; columns: Record<string, string | number | null> },
): InsertResult {
  const { txId, flow, state, columns } = row;
  if (txId.length === 0) throw refused(txId, 'a TransactionId must not be empty');
  return conn.write(() => {
    const existing = findTx(conn, txId);
    if (existing !== null) return { record: existing, created: false };
    const at = now();
    const names = Object.keys(columns);
    conn
      .statement(
        'INSERT INTO transactions (tx_id, flow, state, decimal_places, created_at_ms, updated_at_ms' +
          `${names.map((n) => `, ${n}`).join('')})
           VALUES (?, ?, ?, ?, ?, ?${names.map(() => ', ?').join('')})`,
      )
      .run(txId, flow, state, decimalPlaces, at, at, ...names.map((n) => columns[n]));
    appendEvent(conn, txId, at, 'created', null, state, { flow });
    return { record: loadTx(conn, txId), created: true };
  });
}

export function applyTransition(
  conn: LedgerConnection,
  now: () => number,
  move: {
    txId: string;
    name: TransitionName;
    target: TxState | undefined;
    plan: (tx: TxRecord) => Plan;
    alsoWrite?: ((moved: TxRecord, atMs: number) => void) | undefined;
  },
): TransitionResult {
  const { txId, name, target, plan, alsoWrite } = move;
  return conn.write(() => {
    const tx = loadTx(conn, txId);
    const check = checkTransition(tx.flow, tx.state, name, target);
    if (check.kind === 'already') return { record: tx, changed: false, outboxId: null };
    if (check.kind === 'refused') throw refused(txId, check.reason);
    const steps = plan(tx);
    const at = now();
    moveTx(conn, tx, check.to, at, name, steps.detail ?? null, steps.columns);
    const outboxId = steps.outbox ? enqueue(conn, txId, steps.outbox.op, steps.outbox.body, at) : null;
    const record = loadTx(conn, txId);
    alsoWrite?.(record, at);
    return { record, changed: true, outboxId };
  });
}

export function vendRows(conn: LedgerConnection, txId: string): VendRowData[] {
  return conn.statement('SELECT * FROM vends WHERE tx_id = ? ORDER BY seq').all(txId) as VendRowData[];
}

export function requireResolved(txId: string, vends: VendRowData[]): void {
  const open = vends.filter((v) => v.state === 'approved').map((v) => v.seq);
  if (open.length > 0)
    throw refused(
      txId,
      `vend ${open.join(', ')} has no reported outcome yet; record it (timeout counts as failed) first`,
    );
}
