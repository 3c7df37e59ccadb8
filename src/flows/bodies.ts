/**
 * The request bodies the outbox carries (Settlement, Cancel, Void), built in one place for the
 * live flows and for recovery after a restart, so both send exactly the same shape.
 *
 * The JSON text returned here is what the ledger records and what every retry sends, byte for
 * byte: it is produced once, at the moment the state change that causes it is written.
 */
import { gatewayTimeoutPaymentInfo, type RequestBuilders, type SoldItem } from '../gateway/envelope.js';
import { ReasonCodes, type PaymentInfo } from '../gateway/protocol/index.js';
import type { RecoveryBodies, TxRecord, VendLine } from '../ledger/index.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { authorizationAmount, totalOf } from './amounts.js';

export function soldItems(vends: readonly VendLine[]): SoldItem[] {
  return vends.filter((v) => v.state === 'success').map((v) => ({ item: v.item, price: v.price }));
}

function paymentInfoOf(tx: TxRecord): PaymentInfo {
  if (tx.paymentInfo === null) {
    throw new QrvendError(ErrorCodes.INTERNAL, `transaction ${tx.txId} has no PaymentInfo to send back`, {
      hint: 'this is a bug: a Settlement, Cancel or Void after approval needs the approving PaymentInfo',
    });
  }
  return tx.paymentInfo as PaymentInfo;
}

export interface OutboxBodies extends RecoveryBodies {
  /** Cancel of a static session that sold nothing (or never opened). */
  cancel(tx: TxRecord, reasonCode: number, reasonText: string): string;
  /** Void of a Dynamic QR payment with the PaymentInfo the flow decided on. */
  voidWith(tx: Pick<TxRecord, 'txId' | 'amount'>, paymentInfo: PaymentInfo, reasonCode: number, reasonText: string): string;
}

export interface BodySettings {
  /** staticQr.preauthAmount: what an Authorization that never went out would have asked for. */
  preauthAmount: number;
  decimalPlaces: number;
}

/**
 * Bodies bound to the current builders. `builders` is a getter because the builders are rebuilt
 * when the MDB board reports its firmware (DeviceInfo.FWVersion changes then).
 */
export function outboxBodies(builders: () => RequestBuilders, settings: BodySettings): OutboxBodies {
  const voidWith: OutboxBodies['voidWith'] = (tx, paymentInfo, reasonCode, reasonText) =>
    JSON.stringify(builders().void({ txId: tx.txId, amount: tx.amount ?? 0, paymentInfo, reasonCode, reasonText }));
  return {
    cancelAfterTimeout: (tx) =>
      JSON.stringify(
        builders().cancel({
          txId: tx.txId,
          // A Start left before its Authorization went out has no amount yet: the one it would have had.
          amount: tx.amount ?? authorizationAmount(settings.preauthAmount, tx.startData?.balance, settings.decimalPlaces),
          paymentInfo: gatewayTimeoutPaymentInfo(),
          reasonCode: ReasonCodes.CancelledByMachine,
          reasonText: 'authorization unanswered (gateway timeout)',
        }),
      ),
    settlement: (tx, vends) => {
      const products = soldItems(vends);
      return JSON.stringify(
        builders().settlement({ txId: tx.txId, amount: totalOf(products, tx.decimalPlaces), paymentInfo: paymentInfoOf(tx), products }),
      );
    },
    cancel: (tx, reasonCode, reasonText) =>
      JSON.stringify(
        builders().cancel({ txId: tx.txId, amount: tx.authAmount ?? tx.amount ?? 0, paymentInfo: paymentInfoOf(tx), reasonCode, reasonText }),
      ),
    void: (tx, reasonCode, reasonText) =>
      // Paid (an Inquiry approved): send its PaymentInfo back unchanged. Never approved: the last
      // Inquiry's outcome is unknown, so the Void carries {"IsGatewayTimeout": true} (design 3).
      voidWith(tx, tx.paymentInfo !== null ? (tx.paymentInfo as PaymentInfo) : gatewayTimeoutPaymentInfo(), reasonCode, reasonText),
    voidWith,
  };
}
