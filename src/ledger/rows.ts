/** Turning SQLite rows into the ledger's records (minor units to major, JSON text to objects). */
import type { Flow, TxState } from './states.js';
import { toMajor, toMajorOrNull } from './money.js';
import type {
  LedgerEvent,
  OutboxOperation,
  OutboxRow,
  OutboxStatus,
  StartData,
  TxRecord,
  VendLine,
  VendLineState,
} from './types.js';

export interface TxRowData {
  tx_id: string;
  flow: Flow;
  state: TxState;
  decimal_places: number;
  amount_minor: number | null;
  auth_amount_minor: number | null;
  item: number | null;
  request_id: string | null;
  start_data: string | null;
  payment_info: string | null;
  qr_data: string | null;
  decline_code: number | null;
  machine_au_time: string | null;
  age_limit: number | null;
  created_at_ms: number;
  updated_at_ms: number;
}

export interface VendRowData {
  tx_id: string;
  seq: number;
  item: number;
  price_minor: number;
  state: VendLineState;
  created_at_ms: number;
  updated_at_ms: number;
}

export interface OutboxRowData {
  id: number;
  tx_id: string;
  op: OutboxOperation;
  body: string;
  status: OutboxStatus;
  enqueued_at_ms: number;
  window_started_at_ms: number;
  attempts: number;
  next_attempt_at_ms: number;
  last_error: string | null;
  last_code: number | null;
  done_at_ms: number | null;
  dead_at_ms: number | null;
}

export interface EventRowData {
  id: number;
  tx_id: string;
  at_ms: number;
  kind: string;
  from_state: TxState | null;
  to_state: TxState | null;
  detail: string | null;
}

function parseObject<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

export function txFromRow(row: TxRowData): TxRecord {
  const dp = row.decimal_places;
  return {
    txId: row.tx_id,
    flow: row.flow,
    state: row.state,
    decimalPlaces: dp,
    amount: toMajorOrNull(row.amount_minor, dp),
    authAmount: toMajorOrNull(row.auth_amount_minor, dp),
    item: row.item,
    requestId: row.request_id,
    startData: parseObject<StartData>(row.start_data),
    paymentInfoText: row.payment_info,
    paymentInfo: parseObject<Record<string, unknown>>(row.payment_info),
    qrDataText: row.qr_data,
    qrData: parseObject<Record<string, unknown>>(row.qr_data),
    declineCode: row.decline_code,
    machineAuTime: row.machine_au_time ?? null,
    ageLimit: row.age_limit ?? null,
    createdAtMs: row.created_at_ms,
    updatedAtMs: row.updated_at_ms,
  };
}

export function vendFromRow(row: VendRowData, decimalPlaces: number): VendLine {
  return {
    txId: row.tx_id,
    seq: row.seq,
    item: row.item,
    price: toMajor(row.price_minor, decimalPlaces),
    state: row.state,
    createdAtMs: row.created_at_ms,
    updatedAtMs: row.updated_at_ms,
  };
}

export function outboxFromRow(row: OutboxRowData): OutboxRow {
  return {
    id: row.id,
    txId: row.tx_id,
    op: row.op,
    body: row.body,
    status: row.status,
    enqueuedAtMs: row.enqueued_at_ms,
    windowStartedAtMs: row.window_started_at_ms,
    attempts: row.attempts,
    nextAttemptAtMs: row.next_attempt_at_ms,
    lastError: row.last_error,
    lastCode: row.last_code,
    doneAtMs: row.done_at_ms,
    deadAtMs: row.dead_at_ms,
  };
}

export function eventFromRow(row: EventRowData): LedgerEvent {
  return {
    id: row.id,
    txId: row.tx_id,
    atMs: row.at_ms,
    kind: row.kind,
    fromState: row.from_state,
    toState: row.to_state,
    detail: parseObject<Record<string, unknown>>(row.detail),
  };
}
