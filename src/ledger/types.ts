/**
 * What the ledger hands out. Amounts are major units (numbers, as on the thread messages), converted
 * from the integer minor units stored, with the decimal places recorded on the transaction.
 */
import type { Flow, OutboxOperation, TxState } from './states.js';

export type { OutboxOperation };
export type OutboxStatus = 'pending' | 'done' | 'dead';

export type VendLineState = 'approved' | 'success' | 'failed' | 'cancelled' | 'reset' | 'timeout' | 'expired';

/** Non-secret data from a Static QR Start (the SecretToken is never stored). */
export interface StartData {
  appUserId: string;
  /** The consumer's Balance when Start gave one (caps the Authorization amount). */
  balance: number | null;
}

export interface TxRecord {
  txId: string;
  flow: Flow;
  state: TxState;
  decimalPlaces: number;
  /** Static: the Authorization amount sent; dynamic: the vend price. */
  amount: number | null;
  /** Static: the AuthAmount the gateway approved; dynamic: the AuthAmount of the approving Inquiry. */
  authAmount: number | null;
  /** Dynamic: the MDB item number. */
  item: number | null;
  /** Dynamic: the machine loop's vend request id. */
  requestId: string | null;
  startData: StartData | null;
  /** PaymentInfo exactly as the gateway returned it (send this text back, not a re-serialization). */
  paymentInfoText: string | null;
  paymentInfo: Record<string, unknown> | null;
  qrDataText: string | null;
  qrData: Record<string, unknown> | null;
  declineCode: number | null;
  /** MachineAuTime of the authorization (static: the Authorization; dynamic: the GenerateQR), as sent. */
  machineAuTime: string | null;
  /** BasicInfo.AgeLimitation that authorization carried (Settlement, Cancel and Void repeat it). */
  ageLimit: number | null;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface VendLine {
  txId: string;
  seq: number;
  item: number;
  price: number;
  state: VendLineState;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface OutboxRow {
  id: number;
  txId: string;
  op: OutboxOperation;
  /** The exact request body recorded at enqueue time. */
  body: string;
  status: OutboxStatus;
  enqueuedAtMs: number;
  windowStartedAtMs: number;
  attempts: number;
  nextAttemptAtMs: number;
  lastError: string | null;
  lastCode: number | null;
  doneAtMs: number | null;
  deadAtMs: number | null;
}

export interface LedgerEvent {
  id: number;
  txId: string;
  atMs: number;
  kind: string;
  fromState: TxState | null;
  toState: TxState | null;
  detail: Record<string, unknown> | null;
}

export interface OutboxCounts {
  pending: number;
  dead: number;
  /** Enqueue time of the oldest pending row, null when none is pending. */
  oldestPendingAtMs: number | null;
}

/** What a transition did: `changed` is false when the transaction was already there (a repeat). */
export interface TransitionResult {
  record: TxRecord;
  changed: boolean;
  /** The outbox row this transition wrote, if it wrote one. */
  outboxId: number | null;
}

/** An insert of a new transaction: `created` is false when the TransactionId already existed. */
export interface InsertResult {
  record: TxRecord;
  created: boolean;
}
