/**
 * What the simulated gateway has recorded, per TransactionId: the authorization or QR it
 * issued, the Settlement/Cancel/Void it accepted, duplicates and conflicts. `view()` is the JSON
 * of `GET /_sim/ledger`, made for checkers: every authorized sale should end with exactly one
 * accepted closing operation, and `summary.openAuthorizations` lists those that did not.
 */
import type { GatewayOperation } from '../../gateway/outcome.js';
import type { PaymentInfo, Status } from '../../gateway/protocol/index.js';
import type { PaymentBehaviour } from './behaviours.js';

export type TxState =
  | 'authorized' // static: approved, not closed yet
  | 'auth-declined'
  | 'settled'
  | 'cancelled'
  | 'qr-open' // dynamic: QR issued, not paid yet
  | 'qr-declined' // GenerateQR or the payment declined
  | 'paid' // dynamic: Inquiry approved
  | 'expired' // dynamic: last polling without payment, or voided before payment
  | 'voided';

/** The closing operations, answered idempotently. */
export type ClosingOperation = 'Settlement' | 'Cancel' | 'Void';
export const CLOSING_OPERATIONS: readonly ClosingOperation[] = ['Settlement', 'Cancel', 'Void'];

export interface Decision {
  verdict: Status['Verdict'];
  code: number | null;
  message: string | null;
}

export interface QrRecord {
  amount: number;
  /** MachineInfo.DecimalPlace of the GenerateQR: the decimals this QR's amounts are written with. */
  decimalPlaces: number;
  srvTranId: string;
  rrn: string;
  qrCode: string;
  createdAtMs: number;
  behaviour: PaymentBehaviour;
  /** Inquiries answered so far. */
  polls: number;
  /** PaymentInfo of the approving Inquiry, once paid, and the exact text it was sent as. */
  paymentInfo: PaymentInfo | null;
  paymentInfoText: string | null;
}

export interface ClosingRecord extends Decision {
  amount: number;
  reasonCode: number | null;
  gatewayTimeout: boolean;
  products: number;
}

export interface TxRecord {
  transactionId: string;
  flow: 'static' | 'dynamic';
  state: TxState;
  /** The PaymentInfo issued, and its exact text (what must come back byte for byte). */
  /** `currencyCode`: the currency the answer named when it was not the one asked (approve-in-currency). */
  authorization:
    | (Decision & {
        amount: number;
        paymentInfo: PaymentInfo | null;
        paymentInfoText: string | null;
        currencyCode?: string;
      })
    | null;
  qr: QrRecord | null;
  settlement: ClosingRecord | null;
  cancel: ClosingRecord | null;
  void: ClosingRecord | null;
  /** Requests received per operation (after validation). */
  requests: Record<GatewayOperation, number>;
  /** Closing operations approved (distinct bodies); a checker expects exactly one in total. */
  accepted: Record<ClosingOperation, number>;
  duplicates: Record<ClosingOperation, number>;
  conflicts: { op: GatewayOperation; reason: string }[];
}

export interface RejectedRequest {
  op: GatewayOperation;
  transactionId: string | null;
  code: number;
  member: string;
  message: string;
}

interface Stored {
  bodyText: string;
  answerText: string;
  /** Approved: the operation was processed, another body is a conflict. Declined: it was not. */
  approved: boolean;
}

const zeroOps = (): Record<GatewayOperation, number> => ({
  Authorization: 0,
  Settlement: 0,
  Cancel: 0,
  GenerateQR: 0,
  Inquiry: 0,
  Void: 0,
});
const zeroClosing = (): Record<ClosingOperation, number> => ({ Settlement: 0, Cancel: 0, Void: 0 });

/** How many rejected (invalid) requests are kept for the view; the count is kept in full. */
const REJECTED_KEPT = 200;

export class SimLedger {
  private readonly txs = new Map<string, TxRecord>();
  /** Final answers of closing operations, for idempotent replay: key = op + txId. */
  private readonly answers = new Map<string, Stored>();
  private rejected: RejectedRequest[] = [];
  private rejectedCount = 0;
  private readonly requestCounts = zeroOps();
  private counter = 0;

  get(txId: string): TxRecord | undefined {
    return this.txs.get(txId);
  }

  create(txId: string, flow: TxRecord['flow'], state: TxState): TxRecord {
    const rec: TxRecord = {
      transactionId: txId,
      flow,
      state,
      authorization: null,
      qr: null,
      settlement: null,
      cancel: null,
      void: null,
      requests: zeroOps(),
      accepted: zeroClosing(),
      duplicates: zeroClosing(),
      conflicts: [],
    };
    this.txs.set(txId, rec);
    return rec;
  }

  /** A sequence number for issued references (SrvTranId, RRN, AuthCode). */
  nextNumber(): number {
    this.counter += 1;
    return this.counter;
  }

  countRequest(op: GatewayOperation, txId: string | null): void {
    this.requestCounts[op] += 1;
    if (txId !== null) {
      const rec = this.txs.get(txId);
      if (rec) rec.requests[op] += 1;
    }
  }

  reject(entry: RejectedRequest): void {
    this.rejectedCount += 1;
    this.rejected.push(entry);
    if (this.rejected.length > REJECTED_KEPT) this.rejected = this.rejected.slice(-REJECTED_KEPT);
  }

  storedAnswer(op: ClosingOperation, txId: string): Stored | undefined {
    return this.answers.get(`${op}\u0000${txId}`);
  }

  storeAnswer(op: ClosingOperation, txId: string, stored: Stored): void {
    this.answers.set(`${op}\u0000${txId}`, stored);
  }

  conflict(txId: string, op: GatewayOperation, reason: string, flow: TxRecord['flow']): void {
    const rec = this.txs.get(txId) ?? this.create(txId, flow, flow === 'static' ? 'cancelled' : 'expired');
    rec.conflicts.push({ op, reason });
  }

  duplicate(txId: string, op: ClosingOperation): void {
    const rec = this.txs.get(txId);
    if (rec) rec.duplicates[op] += 1;
  }

  clear(): void {
    this.txs.clear();
    this.answers.clear();
    this.rejected = [];
    this.rejectedCount = 0;
    for (const op of Object.keys(this.requestCounts) as GatewayOperation[]) this.requestCounts[op] = 0;
  }

  view(faults: Record<string, number> = {}): LedgerView {
    const transactions: Record<string, TxRecord> = {};
    const byState: Partial<Record<TxState, number>> = {};
    let duplicates = 0;
    let conflicts = 0;
    const openAuthorizations: string[] = [];
    const closedMoreThanOnce: string[] = [];
    for (const rec of this.txs.values()) {
      transactions[rec.transactionId] = structuredClone(rec);
      byState[rec.state] = (byState[rec.state] ?? 0) + 1;
      duplicates += rec.duplicates.Settlement + rec.duplicates.Cancel + rec.duplicates.Void;
      conflicts += rec.conflicts.length;
      if (rec.state === 'authorized') openAuthorizations.push(rec.transactionId);
      if (rec.accepted.Settlement + rec.accepted.Cancel + rec.accepted.Void > 1)
        closedMoreThanOnce.push(rec.transactionId);
    }
    return {
      summary: {
        transactions: this.txs.size,
        byState,
        requests: { ...this.requestCounts },
        duplicates,
        conflicts,
        rejected: this.rejectedCount,
        openAuthorizations,
        closedMoreThanOnce,
        faults: { ...faults },
      },
      transactions,
      rejected: this.rejected.map((r) => ({ ...r })),
    };
  }
}

export interface LedgerView {
  summary: {
    transactions: number;
    byState: Partial<Record<TxState, number>>;
    /** Valid requests per operation (rejected ones are counted under `rejected`). */
    requests: Record<GatewayOperation, number>;
    duplicates: number;
    conflicts: number;
    rejected: number;
    /** Static authorizations neither settled nor cancelled yet (a paid dynamic QR is a closed sale). */
    openAuthorizations: string[];
    /** Must stay empty: transactions with more than one accepted closing operation. */
    closedMoreThanOnce: string[];
    faults: Record<string, number>;
  };
  transactions: Record<string, TxRecord>;
  rejected: RejectedRequest[];
}
