/**
 * Recovery at start (docs/decisions/sales-and-recovery.md, "Recovery after a crash or power loss"): every transaction
 * the ledger holds that is neither closed nor already waiting on the outbox is resolved, so that
 * each approved payment ends in exactly one Settlement, Cancel or Void:
 *
 * - start_accepted, authorizing: Authorization never answered -> Cancel {IsGatewayTimeout: true};
 * - authorized, session_open: vends without a reported outcome count as failed (not charged);
 *   Settlement for the charged vends (a success, or a reset after the approval: MDB 4.2 7.4.7,
 *   src/ipc/vend-outcome.ts), or Cancel when there were none;
 * - qr_requested: GenerateQR never answered, the QR was never shown -> closed, nothing owed;
 * - qr_issued, paid, vend_approved: the consumer may have paid without a vend -> Void.
 *
 * The vend journal's take-over runs first (src/ledger/vend-journal-takeover.ts) and decides the
 * two cases of a vend approved with no result (docs/decisions/sales-and-recovery.md):
 * - its approval is in the journal: the VMC had it, and a reset after VEND APPROVED is a sale
 *   (MDB 4.2 7.4.7). The take-over records it as `reset` (static) or vended (dynamic), so this
 *   module settles it, or sends no Void;
 * - its approval is not in the journal (the kill came before it left the agent: the VMC never saw
 *   it): it is still `approved` here, and counts as failed ("never reported"), as it always did.
 *
 * Run it after openLedger and before the drainer, the Start endpoint and the flows start. Bodies
 * are built by the flows' builders (RecoveryBodies), so recovered requests look like live ones.
 */
import type { Logger } from '../core/log.js';
import { silentLogger } from '../core/log.js';
import type { Ledger } from './ledger.js';
import { recoveryActionFor, type RecoveryAction, type TxState } from './states.js';
import { describeError } from './sqlite-errors.js';
import { isChargedVend } from '../ipc/vend-outcome.js';
import type { TxRecord, VendLine } from './types.js';

/** Cancel/Void ReasonCode 3: cancelled by machine (docs/decisions/gateway-interface.md). */
export const REASON_CANCELLED_BY_MACHINE = 3;
export const RECOVERY_REASON_TEXT = 'machine restarted before the payment completed';

/** The flows' request builders, returning the exact JSON text to record and send. */
export interface RecoveryBodies {
  /** Cancel for an Authorization never answered: PaymentInfo {"IsGatewayTimeout": true}. */
  cancelAfterTimeout(tx: TxRecord): string;
  /** Settlement: BasicInfo.Amount = sum of `successfulVends` prices, one Products entry per vend. */
  settlement(tx: TxRecord, successfulVends: readonly VendLine[]): string;
  /** Cancel of an authorized session with no successful vend (PaymentInfo = tx.paymentInfoText). */
  cancel(tx: TxRecord, reasonCode: number, reasonText: string): string;
  /**
   * Void of a dynamic QR payment. PaymentInfo: tx.paymentInfoText when Inquiry approved (paid,
   * vend_approved); in qr_issued none was approved, so per docs/decisions/gateway-interface.md the Void carries
   * {"IsGatewayTimeout": true} (the outcome of the last Inquiry is unknown).
   */
  void(tx: TxRecord, reasonCode: number, reasonText: string): string;
}

export interface RecoveredTransaction {
  txId: string;
  from: TxState;
  to: TxState;
  action: RecoveryAction;
  /** Vends whose outcome was never reported, now recorded as timeout (treated as failed). */
  unreportedVends: number;
  outboxId: number | null;
}

export interface RecoveryReport {
  recovered: RecoveredTransaction[];
  /** Transactions that could not be resolved now (left as they were; the next start tries again). */
  failed: Array<{ txId: string; state: TxState; error: string }>;
}

function resolveOne(
  ledger: Ledger,
  tx: TxRecord,
  bodies: RecoveryBodies,
): Omit<RecoveredTransaction, 'from' | 'action'> {
  const action = recoveryActionFor(tx.state);
  switch (action) {
    case 'cancel-timeout': {
      const result = ledger.cancelAfterAuthTimeout(tx.txId, bodies.cancelAfterTimeout(tx));
      return { txId: tx.txId, to: result.record.state, unreportedVends: 0, outboxId: result.outboxId };
    }
    case 'close-session': {
      let unreported = 0;
      if (tx.state === 'session_open') {
        for (const vend of ledger.vendsOf(tx.txId)) {
          if (vend.state !== 'approved') continue;
          // Never journaled as approved (an approval the VMC had was charged by the take-over).
          const why = 'outcome never reported before a restart, its approval never journaled; treated as failed';
          ledger.recordVendResult(tx.txId, vend.seq, 'timeout', why);
          unreported++;
        }
      }
      // A vend recorded as reset after its approval is charged (MDB 4.2 7.4.7); one never reported is not.
      const sold = ledger.vendsOf(tx.txId).filter((v) => isChargedVend(v.state));
      const result =
        sold.length > 0
          ? ledger.settleSession(tx.txId, bodies.settlement(tx, sold))
          : ledger.cancelSession(
              tx.txId,
              REASON_CANCELLED_BY_MACHINE,
              bodies.cancel(tx, REASON_CANCELLED_BY_MACHINE, RECOVERY_REASON_TEXT),
            );
      return { txId: tx.txId, to: result.record.state, unreportedVends: unreported, outboxId: result.outboxId };
    }
    case 'not-issued': {
      const result = ledger.closeUnpaid(
        tx.txId,
        'not_issued',
        null,
        'GenerateQR unanswered before a restart; the QR was never shown',
      );
      return { txId: tx.txId, to: result.record.state, unreportedVends: 0, outboxId: null };
    }
    case 'void': {
      const result = ledger.voidPayment(
        tx.txId,
        REASON_CANCELLED_BY_MACHINE,
        bodies.void(tx, REASON_CANCELLED_BY_MACHINE, RECOVERY_REASON_TEXT),
      );
      return { txId: tx.txId, to: result.record.state, unreportedVends: 0, outboxId: result.outboxId };
    }
    case 'none':
      return { txId: tx.txId, to: tx.state, unreportedVends: 0, outboxId: null };
  }
}

export interface RecoverOptions {
  /**
   * Transactions a running flow still owns (a live session, a payment being polled): left alone.
   * At start-up nothing is owned; when the disk takes writes again after a failure, recovery runs
   * for what the flows had to let go of.
   */
  skip?: (txId: string) => boolean;
}

/** Resolves every unresolved transaction; each in its own SQLite transaction(s). */
export function recoverLedger(
  ledger: Ledger,
  bodies: RecoveryBodies,
  logger: Logger = silentLogger(),
  options: RecoverOptions = {},
): RecoveryReport {
  const report: RecoveryReport = { recovered: [], failed: [] };
  for (const tx of ledger.unresolvedTransactions()) {
    if (options.skip?.(tx.txId)) continue;
    const action = recoveryActionFor(tx.state);
    try {
      const done = resolveOne(ledger, tx, bodies);
      report.recovered.push({ ...done, from: tx.state, action });
      logger.warn(
        { txId: tx.txId, from: tx.state, to: done.to, action, unreportedVends: done.unreportedVends },
        'recovered a transaction left open by a crash or power loss',
      );
    } catch (err) {
      report.failed.push({ txId: tx.txId, state: tx.state, error: describeError(err) });
      logger.error(
        { txId: tx.txId, state: tx.state, err: describeError(err) },
        'could not recover a transaction; it stays as it was until the next start',
      );
    }
  }
  return report;
}
