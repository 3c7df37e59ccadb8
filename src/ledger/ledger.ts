/**
 * The ledger: one named method per transition of a payment (docs/decisions/sales-and-recovery.md), each one SQLite
 * transaction that moves the state, appends to the event log and, when the step owes the gateway
 * a Settlement, Cancel or Void, writes the outbox row with its exact body, all or nothing.
 *
 * Every method is safe to repeat: a call that finds the transaction already where it would take
 * it returns `changed: false` (a write may have reached the disk although its sync reported a
 * failure, and the flow retries after the ledger is writable again).
 */
import type { Logger } from '../core/log.js';
import { silentLogger } from '../core/log.js';
import { checkBody } from './body-check.js';
import { LedgerConnection, realTimers, type LedgerTimers, type WritabilityListener } from './connection.js';
import { openDatabase, type CorruptionAlarm } from './db.js';
import { toMinor } from './money.js';
import { isChargedVend } from '../ipc/vend-outcome.js';
import { LedgerOutbox } from './outbox.js';
import { FleetEventLog } from './fleet-events.js';
import { CashSaleLog } from './cash-sales.js';
import { DexAuditLog } from './dex-audits.js';
import { eventFromRow, txFromRow, vendFromRow, type EventRowData, type TxRowData, type VendRowData } from './rows.js';
import { CLOSED_STATES, DELIVERING_STATES, type TransitionName, type TxState, type UnpaidResult } from './states.js';
import { EVENTS_OF_TX, findTx, refused } from './tx-writes.js';
import { insertVendApproved, updateVendResult } from './vend-lines.js';
import {
  applyTransition,
  insertTx,
  NOT_RECORDED,
  objectText,
  requireResolved,
  vendRows,
  type AuthorizationFacts,
  type JsonObjectOrText,
  type Plan,
} from './transition-writes.js';
import type {
  InsertResult,
  LedgerEvent,
  StartData,
  TransitionResult,
  TxRecord,
  VendLine,
  VendLineState,
} from './types.js';

export type { AuthorizationFacts, JsonObjectOrText } from './transition-writes.js';

export interface OpenLedgerOptions {
  /** store.path */
  path: string;
  /** machine.decimalPlaces: amounts given to the ledger are rounded to this. */
  decimalPlaces: number;
  logger?: Logger;
  /** Epoch milliseconds; injectable for tests. */
  now?: () => number;
  timers?: LedgerTimers;
  /** How often an unwritable ledger tries a probe write (default 2000 ms). */
  probeIntervalMs?: number;
}

/** Opens (creating, migrating, and if damaged replacing) the ledger at `options.path`. */
export function openLedger(options: OpenLedgerOptions): Ledger {
  const logger = options.logger ?? silentLogger();
  const now = options.now ?? Date.now;
  const { db, alarm } = openDatabase(options.path, logger, now());
  const conn = new LedgerConnection(db, {
    path: options.path,
    logger,
    now,
    timers: options.timers ?? realTimers,
    probeIntervalMs: options.probeIntervalMs ?? 2000,
  });
  return new Ledger(conn, options.decimalPlaces, now, alarm);
}

export class Ledger {
  readonly outbox: LedgerOutbox;
  /** The fleet link's outgoing events (off until enable() is called). */
  readonly fleetEvents: FleetEventLog;
  /** Sales another device was paid for, as the VMC reported them (never charged). */
  readonly cashSales: CashSaleLog;
  /** The VMC's own audits read over its DEX jack (docs/decisions/machine-audit.md). */
  readonly dexAudits: DexAuditLog;
  private readonly enqueuedListeners = new Set<(outboxId: number, txId: string) => void>();

  constructor(
    private readonly conn: LedgerConnection,
    /** machine.decimalPlaces, recorded on each new transaction. */
    readonly decimalPlaces: number,
    private readonly now: () => number,
    /** Set when this start found the file damaged and replaced it (docs/decisions/reliability-bars.md). */
    readonly corruptionAlarm: CorruptionAlarm | null,
  ) {
    this.fleetEvents = new FleetEventLog(conn, now);
    this.outbox = new LedgerOutbox(conn, now, this.fleetEvents);
    this.cashSales = new CashSaleLog(conn, now, this.fleetEvents, decimalPlaces);
    this.dexAudits = new DexAuditLog(conn, this.fleetEvents);
  }

  // --- health -------------------------------------------------------------------------------

  /** False after a failed write until one succeeds again: refuse new sessions meanwhile. */
  get writable(): boolean {
    return this.conn.writable;
  }

  get unwritableReason(): string | null {
    return this.conn.unwritableReason;
  }

  /** Called on every change of writability; returns the unsubscribe function. */
  onWritability(listener: WritabilityListener): () => void {
    return this.conn.onWritability(listener);
  }

  /** Called after a transition that wrote an outbox row has committed (the drainer subscribes to kick itself). */
  onEnqueued(listener: (outboxId: number, txId: string) => void): () => void {
    this.enqueuedListeners.add(listener);
    return () => this.enqueuedListeners.delete(listener);
  }

  /**
   * Several transitions as one durable write (one commit, one fsync): for steps with no effect
   * outside the process between them (SD-card wear, docs/decisions/benchmarks.md). The transitions inside nest as
   * savepoints; if one throws, none of them is kept.
   */
  atomically<T>(fn: () => T): T {
    return this.conn.write(fn);
  }

  /** Try one write now (the ledger also probes on its own timer while unwritable). */
  probe(): boolean {
    return this.conn.probe();
  }

  close(): void {
    this.conn.close();
  }

  // --- reads --------------------------------------------------------------------------------

  getTransaction(txId: string): TxRecord | null {
    return this.conn.read(() => findTx(this.conn, txId));
  }

  /** In the ledger, or pruned from it less than USED_ID_KEEP_MS ago (a replayed Start: 996). */
  transactionIdUsed(txId: string): boolean {
    return this.conn.read(
      () =>
        findTx(this.conn, txId) !== null ||
        this.conn.statement('SELECT 1 FROM used_tx_ids WHERE tx_id = ?').get(txId) !== undefined,
    );
  }

  vendsOf(txId: string): VendLine[] {
    return this.conn.read(() => {
      const tx = findTx(this.conn, txId);
      if (tx === null) return [];
      const rows = this.conn.statement('SELECT * FROM vends WHERE tx_id = ? ORDER BY seq').all(txId) as VendRowData[];
      return rows.map((r) => vendFromRow(r, tx.decimalPlaces));
    });
  }

  eventsOf(txId: string): LedgerEvent[] {
    return this.conn.read(() =>
      (
        this.conn
          .statement(`SELECT e.* FROM transactions t JOIN ${EVENTS_OF_TX} WHERE t.tx_id = ? ORDER BY e.id`)
          .all(txId) as EventRowData[]
      ).map(eventFromRow),
    );
  }

  /** Transactions neither closed nor waiting on the outbox: what recovery must resolve. */
  unresolvedTransactions(): TxRecord[] {
    const settled = JSON.stringify([...CLOSED_STATES, ...DELIVERING_STATES]);
    return this.conn.read(() =>
      (
        this.conn
          .statement(
            'SELECT * FROM transactions WHERE state NOT IN (SELECT value FROM json_each(?)) ' +
              'ORDER BY created_at_ms, tx_id',
          )
          .all(settled) as TxRowData[]
      ).map(txFromRow),
    );
  }

  // --- Static QR ----------------------------------------------------------------------------

  /** Start validated: kept durably before Approved is answered. A known TransactionId: its record. */
  acceptStart(input: { txId: string } & StartData): InsertResult {
    const startData: StartData = { appUserId: input.appUserId, balance: input.balance };
    const columns = { start_data: JSON.stringify(startData) };
    return insertTx(this.conn, this.now, this.decimalPlaces, {
      txId: input.txId,
      flow: 'static',
      state: 'start_accepted',
      columns,
    });
  }

  /** Authorization is about to be sent for `amount`, with this MachineAuTime and AgeLimitation. */
  markAuthorizing(
    txId: string,
    amount: number,
    auth: AuthorizationFacts | typeof NOT_RECORDED = NOT_RECORDED,
  ): TransitionResult {
    return this.transition(txId, 'markAuthorizing', undefined, (tx) => ({
      columns: {
        amount_minor: toMinor(amount, tx.decimalPlaces, 'Authorization amount'),
        machine_au_time: auth.machineAuTime,
        age_limit: auth.ageLimit,
      },
      detail: { amount, machineAuTime: auth.machineAuTime, ageLimit: auth.ageLimit },
    }));
  }

  /** Authorization approved: keep PaymentInfo exactly as returned, and the AuthAmount (the session's funds). */
  markAuthorized(txId: string, paymentInfo: JsonObjectOrText, authAmount: number): TransitionResult {
    return this.transition(txId, 'markAuthorized', undefined, (tx) => ({
      columns: {
        payment_info: objectText(paymentInfo, 'PaymentInfo'),
        auth_amount_minor: toMinor(authAmount, tx.decimalPlaces, 'AuthAmount'),
      },
      detail: { authAmount },
    }));
  }

  /** Authorization declined: closed, nothing owed. */
  markDeclined(txId: string, code: number | null, message: string | null): TransitionResult {
    return this.transition(txId, 'markDeclined', undefined, () => ({
      columns: { decline_code: code },
      detail: { code, message },
    }));
  }

  /** Start or Authorization without an answer: Cancel with PaymentInfo {"IsGatewayTimeout":true}. */
  cancelAfterAuthTimeout(txId: string, cancelBody: string): TransitionResult {
    return this.transition(txId, 'cancelAfterAuthTimeout', undefined, () => {
      checkBody('Cancel', txId, cancelBody);
      return { outbox: { op: 'Cancel', body: cancelBody }, detail: { reason: 'authorization unanswered' } };
    });
  }

  /** The board confirmed the MDB session. */
  openSession(txId: string): TransitionResult {
    return this.transition(txId, 'openSession', undefined, () => ({}));
  }

  /** A vend approved locally inside the session; its outcome follows with recordVendResult. */
  recordVendApproved(txId: string, vend: { seq: number; item: number; price: number }): VendLine {
    return this.conn.write(() => insertVendApproved(this.conn, this.now, txId, vend));
  }

  /** What became of an approved vend. A success, or a reset after the approval, is charged (vend-outcome.ts). */
  recordVendResult(
    txId: string,
    seq: number,
    outcome: Exclude<VendLineState, 'approved'>,
    detail: string | null = null,
  ): VendLine {
    return this.conn.write(() => updateVendResult(this.conn, this.now, txId, seq, outcome, detail));
  }

  /** Session ended with at least one successful vend: Settlement (amount = their sum) to the outbox. */
  settleSession(txId: string, settlementBody: string): TransitionResult {
    return this.transition(txId, 'settleSession', undefined, (tx) => {
      const vends = vendRows(this.conn, txId);
      requireResolved(txId, vends);
      const sold = vends.filter((v) => isChargedVend(v.state));
      if (sold.length === 0)
        throw refused(
          txId,
          'a Settlement needs at least one charged vend (success, or reset after approval); cancel the session instead',
        );
      const amountMinor = sold.reduce((sum, v) => sum + v.price_minor, 0);
      checkBody('Settlement', txId, settlementBody, {
        amountMinor,
        decimalPlaces: tx.decimalPlaces,
        products: sold.length,
      });
      return { outbox: { op: 'Settlement', body: settlementBody }, detail: { vends: sold.length, amountMinor } };
    });
  }

  /** Session ended (or never opened) with no successful vend: Cancel with a ReasonCode to the outbox. */
  cancelSession(txId: string, reasonCode: number, cancelBody: string): TransitionResult {
    return this.transition(txId, 'cancelSession', undefined, () => {
      const vends = vendRows(this.conn, txId);
      requireResolved(txId, vends);
      if (vends.some((v) => isChargedVend(v.state)))
        throw refused(txId, 'the session sold something; settle it instead of cancelling');
      checkBody('Cancel', txId, cancelBody);
      return { outbox: { op: 'Cancel', body: cancelBody }, detail: { reasonCode } };
    });
  }

  // --- Dynamic QR ---------------------------------------------------------------------------

  /** GenerateQR is about to be sent (this MachineAuTime, AgeLimitation). A known TransactionId: its record. */
  requestQr(
    input: { txId: string; amount: number; item: number; requestId: string | null } & Partial<AuthorizationFacts>,
  ): InsertResult {
    const amountMinor = toMinor(input.amount, this.decimalPlaces, 'dynamic QR amount');
    return insertTx(this.conn, this.now, this.decimalPlaces, {
      txId: input.txId,
      flow: 'dynamic',
      state: 'qr_requested',
      columns: {
        amount_minor: amountMinor,
        item: input.item,
        request_id: input.requestId,
        machine_au_time: input.machineAuTime ?? null,
        age_limit: input.ageLimit ?? null,
      },
    });
  }

  /** GenerateQR answered: QRData (SrvTranId, RRN, ChannelId) kept as returned. */
  recordQrIssued(txId: string, qrData: JsonObjectOrText): TransitionResult {
    return this.transition(txId, 'recordQrIssued', undefined, () => ({
      columns: { qr_data: objectText(qrData, 'QRData') },
    }));
  }

  /** The payment ended without taking money (declined, expired, never issued, cancelled before paying). */
  closeUnpaid(txId: string, result: UnpaidResult, code: number | null, detail: string): TransitionResult {
    return this.transition(txId, 'closeUnpaid', result, () => ({
      columns: { decline_code: code },
      detail: { code, detail },
    }));
  }

  /**
   * Inquiry approved: PaymentInfo kept exactly as returned (the Void sends it back unchanged), and
   * what the consumer paid (its AuthAmount, in minor units, rounded down), when it said.
   */
  recordPaid(txId: string, paymentInfo: JsonObjectOrText, paidMinor: number | null = null): TransitionResult {
    return this.transition(txId, 'recordPaid', undefined, () => ({
      columns: {
        payment_info: objectText(paymentInfo, 'PaymentInfo'),
        ...(paidMinor !== null ? { auth_amount_minor: paidMinor } : {}),
      },
      ...(paidMinor !== null ? { detail: { paidMinor } } : {}),
    }));
  }

  /** The paid vend was approved to the VMC. */
  approveVend(txId: string): TransitionResult {
    return this.transition(txId, 'approveVend', undefined, () => ({}));
  }

  /** Vend success: closed, nothing to send (the Inquiry took the money); its fleet sale event goes with it. */
  recordVended(txId: string): TransitionResult {
    const result = this.transition(
      txId,
      'recordVended',
      undefined,
      () => ({}),
      (tx, at) => this.fleetEvents.recordSaleInTransaction(tx, 'settlement', 'accepted', at),
    );
    this.fleetEvents.flush();
    return result;
  }

  /** A payment that may have been taken without a vend: Void to the outbox. */
  voidPayment(txId: string, reasonCode: number, voidBody: string): TransitionResult {
    return this.transition(txId, 'voidPayment', undefined, () => {
      checkBody('Void', txId, voidBody);
      return { outbox: { op: 'Void', body: voidBody }, detail: { reasonCode } };
    });
  }

  // --- internals ----------------------------------------------------------------------------

  private transition(
    txId: string,
    name: TransitionName,
    target: TxState | undefined,
    plan: (tx: TxRecord) => Plan,
    alsoWrite?: (moved: TxRecord, atMs: number) => void,
  ): TransitionResult {
    const result = applyTransition(this.conn, this.now, { txId, name, target, plan, alsoWrite });
    if (result.outboxId !== null) {
      for (const listener of [...this.enqueuedListeners]) listener(result.outboxId, txId);
    }
    return result;
  }
}
