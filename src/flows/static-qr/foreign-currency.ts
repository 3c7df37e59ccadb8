/**
 * A Static QR Authorization the gateway approved in another currency than asked (docs/payments.md,
 * "Answers in another currency"). Read as a decline (src/gateway/currency-check.ts), but the
 * gateway holds the approved amount: the Authorization is recorded with no funds and closed at
 * once by a Cancel (machine cause) that releases the whole hold, with the Authorization's Amount
 * and currency as asked and its PaymentInfo as received. A Cancel the gateway refuses is
 * dead-lettered by the outbox like any other (a person reconciles it). The alarm
 * GATEWAY_CURRENCY_MISMATCH names the answer: a gateway set up in another currency fails every
 * sale the same way until someone corrects the machine's or the merchant's currency.
 */
import { ReasonCodes } from '../../gateway/protocol/index.js';
import { receivedPaymentInfo } from '../../gateway/wire/index.js';
import type { GatewayOutcome } from '../../gateway/outcome.js';
import { tryWrite, type FlowContext } from '../context.js';

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
  const detail =
    `the gateway approved Authorization ${txId} in ${answered} when ${asked} was asked; read here as declined ` +
    `(code ${outcome.code}) and its hold cancelled in full. Check machine.currencyCode and machine.currencyNumeric ` +
    "against the currency of the gateway's merchant account";
  const facts = { txId, code: 'GATEWAY_CURRENCY_MISMATCH', declineCode: outcome.code, asked, answered };
  ctx.log.error({ ...facts, cancelQueued: written }, detail);
  ctx.alarm?.('GATEWAY_CURRENCY_MISMATCH', true, detail);
  return written;
}

/** An Authorization approved in the currency asked: the gateway's currency is right again. */
export function currencyAgreed(ctx: FlowContext): void {
  ctx.alarm?.('GATEWAY_CURRENCY_MISMATCH', false, null);
}
