/**
 * The request bodies the outbox carries (Settlement, Cancel, Void), built in one place for the
 * live flows and for recovery after a restart, so both send exactly the same bytes.
 *
 * The JSON text returned here is what the ledger records and what every retry sends, byte for
 * byte: it is produced once, at the moment the state change that causes it is written. What a
 * closing request repeats from its authorization (PaymentInfo as received, MachineAuTime,
 * AgeLimitation) comes from the ledger, never from the clock or the current catalog.
 */
import { formatGatewayDateTime, ReasonCodes } from '../gateway/protocol/index.js';
import type { ClosedAuthorization, RequestBuilders, SoldItem } from '../gateway/envelope.js';
import { encodeRequest, GATEWAY_TIMEOUT_PAYMENT_INFO, RawJson } from '../gateway/wire/index.js';
import type { RecoveryBodies, TxRecord, VendLine } from '../ledger/index.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { authorizationAmount, totalOf } from './amounts.js';
import { isChargedVend } from '../ipc/vend-outcome.js';

export function soldItems(vends: readonly VendLine[]): SoldItem[] {
  return vends.filter((v) => isChargedVend(v.state)).map((v) => ({ item: v.item, price: v.price }));
}

/** The PaymentInfo the gateway returned, as the exact text recorded. */
function paymentInfoOf(tx: TxRecord): RawJson {
  if (tx.paymentInfoText === null) {
    throw new QrvendError(ErrorCodes.INTERNAL, `transaction ${tx.txId} has no PaymentInfo to send back`, {
      hint: 'this is a bug: a Settlement, Cancel or Void after approval needs the approving PaymentInfo',
    });
  }
  return new RawJson(tx.paymentInfoText);
}

/**
 * MachineAuTime and AgeLimitation of the authorization `tx` closes. A transaction recorded before
 * they were kept (or a Start whose Authorization never went out) uses the time it was created.
 */
export function closedAuthorization(
  tx: Pick<TxRecord, 'machineAuTime' | 'ageLimit' | 'createdAtMs'>,
): ClosedAuthorization {
  return { machineAuTime: tx.machineAuTime ?? formatGatewayDateTime(new Date(tx.createdAtMs)), ageLimit: tx.ageLimit };
}

export interface OutboxBodies extends RecoveryBodies {
  /** Cancel of a static session that sold nothing (or never opened). */
  cancel(tx: TxRecord, reasonCode: number, reasonText: string): string;
  /**
   * Cancel of an Authorization approved on terms refused here (another currency): the whole hold,
   * with the Authorization's Amount as it was asked (not the funds offered, which are none).
   */
  cancelHeld(tx: TxRecord, reasonCode: number, reasonText: string): string;
  /** Void of a Dynamic QR payment with the PaymentInfo the flow decided on. */
  voidWith(
    tx: Pick<TxRecord, 'txId' | 'amount' | 'machineAuTime' | 'ageLimit' | 'createdAtMs'>,
    paymentInfo: RawJson,
    reasonCode: number,
    reasonText: string,
  ): string;
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
    encodeRequest(
      builders().void({
        txId: tx.txId,
        amount: tx.amount ?? 0,
        paymentInfo,
        reasonCode,
        reasonText,
        ...closedAuthorization(tx),
      }),
    );
  return {
    cancelAfterTimeout: (tx) =>
      encodeRequest(
        builders().cancel({
          txId: tx.txId,
          // A Start left before its Authorization went out has no amount yet: the one it would have had.
          amount:
            tx.amount ?? authorizationAmount(settings.preauthAmount, tx.startData?.balance, settings.decimalPlaces),
          paymentInfo: GATEWAY_TIMEOUT_PAYMENT_INFO,
          reasonCode: ReasonCodes.CancelledByMachine,
          reasonText: 'authorization unanswered (gateway timeout)',
          ...closedAuthorization(tx),
        }),
      ),
    settlement: (tx, vends) => {
      const products = soldItems(vends);
      return encodeRequest(
        builders().settlement({
          txId: tx.txId,
          amount: totalOf(products, tx.decimalPlaces),
          paymentInfo: paymentInfoOf(tx),
          products,
          ...closedAuthorization(tx),
        }),
      );
    },
    cancel: (tx, reasonCode, reasonText) =>
      encodeRequest(
        builders().cancel({
          txId: tx.txId,
          amount: tx.authAmount ?? tx.amount ?? 0,
          paymentInfo: paymentInfoOf(tx),
          reasonCode,
          reasonText,
          ...closedAuthorization(tx),
        }),
      ),
    cancelHeld: (tx, reasonCode, reasonText) =>
      encodeRequest(
        builders().cancel({
          txId: tx.txId,
          amount:
            tx.amount ?? authorizationAmount(settings.preauthAmount, tx.startData?.balance, settings.decimalPlaces),
          paymentInfo: paymentInfoOf(tx),
          reasonCode,
          reasonText,
          ...closedAuthorization(tx),
        }),
      ),
    void: (tx, reasonCode, reasonText) =>
      // Paid (an Inquiry approved): send its PaymentInfo back unchanged. Never approved: the last
      // Inquiry's outcome is unknown, so the Void carries {"IsGatewayTimeout": true} (design 3).
      voidWith(
        tx,
        tx.paymentInfoText !== null ? new RawJson(tx.paymentInfoText) : GATEWAY_TIMEOUT_PAYMENT_INFO,
        reasonCode,
        reasonText,
      ),
    voidWith,
  };
}
