/**
 * A Static QR Authorization the gateway approved in another currency than asked (docs/payments.md,
 * "Answers in another currency"). Read as a decline (src/gateway/currency-check.ts), but the
 * gateway holds the approved amount: the Authorization is recorded with no funds and closed at
 * once by a Cancel (machine cause) that releases the whole hold, with the Authorization's Amount
 * and currency as asked and its PaymentInfo as received. A Cancel the gateway refuses is
 * dead-lettered by the outbox like any other (a person reconciles it). The alarm
 * GATEWAY_CURRENCY_MISMATCH names the answer (src/flows/currency-alarm.ts).
 */
import { ReasonCodes } from '../../gateway/protocol/index.js';
import { receivedPaymentInfo } from '../../gateway/wire/index.js';
import type { GatewayOutcome } from '../../gateway/outcome.js';
import { tryWrite, type FlowContext } from '../context.js';
import { currencyAgreed, raiseCurrencyMismatch } from '../currency-alarm.js';

type HeldDecline = Extract<GatewayOutcome<{ PaymentInfo?: unknown }>, { kind: 'declined' }>;

/** Records the held Authorization and its Cancel in one transaction, raises the alarm; true when written. */
export function cancelForeignCurrency(ctx: FlowContext, txId: string, outcome: HeldDecline): boolean {
  const paymentInfo = receivedPaymentInfo(outcome);
  const reasonText = outcome.message ?? 'approved in another currency';
  // One transaction: recovery never sees the approval without its Cancel.
  const written = tryWrite(ctx, 'cancelForeignCurrency', txId, () =>
    ctx.ledger.atomically(() => {
      ctx.ledger.markAuthorized(txId, paymentInfo?.text ?? '{}', 0);
      const tx = ctx.ledger.getTransaction(txId)!;
      const cancel = ctx.bodies.cancelHeld(tx, ReasonCodes.CancelledByMachine, reasonText);
      ctx.ledger.cancelSession(txId, ReasonCodes.CancelledByMachine, cancel);
    }),
  );
  if (written) ctx.outboxChanged();
  const asked = outcome.currencies?.asked ?? ctx.settings.currencyCode;
  const answered = outcome.currencies?.answered ?? 'another currency';
  const mismatch = { txId, operation: 'Authorization', declineCode: outcome.code, asked, answered };
  raiseCurrencyMismatch(ctx, mismatch, 'its hold cancelled in full', { cancelQueued: written });
  return written;
}

export { currencyAgreed };
