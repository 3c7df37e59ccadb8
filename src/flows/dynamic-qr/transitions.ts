/**
 * The building blocks of the Dynamic QR transitions (docs/decisions/sales-and-recovery.md): what an
 * Inquiry answer says, what was paid against the price, and the closings every state shares.
 */
import { RETRYABLE_DECLINE_CODES, type GatewayOutcome } from '../../gateway/outcome.js';
import { paymentInfoFromGenerateQR } from '../../gateway/envelope.js';
import type { InquiryResponse } from '../../gateway/protocol/index.js';
import { authAmountOf, minorOf, receivedPaymentInfo } from '../../gateway/wire/index.js';
import type { DeclineReason, Screen } from '../../ipc/messages.js';
import type {
  DynamicQrContext,
  DynamicQrEffect,
  DynamicQrState,
  EndCause,
  IssuedQr,
  PaymentInfo,
  Transition,
  VoidReason,
} from './state.js';

export const PENDING = 993;
export const TIMED_OUT = 992;

/**
 * What an Inquiry answer that is not Approved says about the consumer's payment:
 * - unpaid: a verdict (a final decline; or, on the last poll, pending or timed out, since the gateway
 *   closes the QR when it sees IsLastPolling);
 * - pending: 993 before the last poll;
 * - unknown: no verdict (transport failure, or a "try again" decline such as 6, 30, 992, 999 before
 *   the last poll): the consumer may have paid, so it never counts as a decline.
 */
export function inquiryVerdict(
  outcome: Exclude<GatewayOutcome<unknown>, { kind: 'approved' }>,
  lastPoll: boolean,
): 'unpaid' | 'pending' | 'unknown' {
  if (outcome.kind === 'transport') return 'unknown';
  if (outcome.code === PENDING || outcome.code === TIMED_OUT)
    return lastPoll ? 'unpaid' : outcome.code === PENDING ? 'pending' : 'unknown';
  return RETRYABLE_DECLINE_CODES.has(outcome.code) ? 'unknown' : 'unpaid';
}

export function voidReason(cause: EndCause, text: string): VoidReason {
  return { reasonCode: cause.byConsumer ? 2 : 3, reasonText: `${text}: ${cause.reason}` };
}

/**
 * PaymentInfo for an Inquiry before any Inquiry approved: composed from GenerateQR
 * (docs/decisions/gateway-interface.md).
 */
export function paymentInfoFromQr(qr: IssuedQr, amount: number, decimalPlaces: number): PaymentInfo {
  return paymentInfoFromGenerateQR(
    { QRData: { SrvTranId: qr.srvTranId ?? undefined, RRN: qr.rrn ?? undefined } },
    amount,
    decimalPlaces,
  );
}

/**
 * What an approving Inquiry says was paid, against the price (docs/decisions/gateway-interface.md): `short` when
 * its AuthAmount is below the price (the vend is denied and the payment voided). An answer
 * without AuthAmount approves the QR for the amount it was issued for.
 */
export function paidAgainstPrice(
  paymentInfo: PaymentInfo,
  ctx: Pick<DynamicQrContext, 'amount' | 'decimalPlaces'>,
): { short: boolean; paidMinor: number | null } {
  const paid = authAmountOf(paymentInfo, ctx.decimalPlaces);
  if (paid === null) return { short: false, paidMinor: null };
  const priceMinor = BigInt(minorOf(ctx.amount, ctx.decimalPlaces));
  const paidMinor = paid.minor >= 0n && paid.minor <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(paid.minor) : null;
  return { short: paid.minor < priceMinor, paidMinor };
}

export function deny(ctx: DynamicQrContext, reason: string): DynamicQrEffect {
  return { tag: 'main', message: { type: 'vend.deny', requestId: ctx.requestId, reason } };
}

export function closeUnpaid(
  ctx: DynamicQrContext,
  result: 'declined' | 'expired' | 'not-issued' | 'cancelled',
  code: number | null,
  detail: string,
  screen: Screen | null,
): Transition {
  const effects: DynamicQrEffect[] = [
    { tag: 'record', record: { tag: 'closed-unpaid', result, code, detail } },
    deny(ctx, detail),
  ];
  if (screen) effects.push({ tag: 'show', screen });
  return { state: { tag: 'closed', ctx, result }, effects };
}

/**
 * Paid, but not on terms qrvend accepts (below the price, another currency): the payment is
 * recorded as paid and voided, and the vend is denied unless the VMC already gave up on it.
 */
export function refusePaid(
  ctx: DynamicQrContext,
  paymentInfo: PaymentInfo,
  paidMinor: number | null,
  reason: VoidReason,
  denyVend: boolean,
  screen: Screen,
): Transition {
  return {
    state: { tag: 'closed', ctx, result: 'voided' },
    effects: [
      ...(denyVend ? [deny(ctx, reason.reasonText)] : []),
      { tag: 'record', record: { tag: 'paid', paymentInfo, paidMinor } },
      { tag: 'void', paymentInfo, reason },
      { tag: 'show', screen },
    ],
  };
}

/** Paid, but in another currency than asked: refused, what was taken goes back, the alarm names the answer. */
export function refuseForeignCurrency(
  ctx: DynamicQrContext,
  qr: IssuedQr,
  o: Extract<GatewayOutcome<Pick<InquiryResponse, 'PaymentInfo'>>, { kind: 'declined' }>,
  denyVend: boolean,
): Transition {
  const paymentInfo = receivedPaymentInfo(o) ?? paymentInfoFromQr(qr, ctx.amount, ctx.decimalPlaces);
  const reason: VoidReason = { reasonCode: 3, reasonText: 'paid in another currency than asked' };
  const refused = refusePaid(ctx, paymentInfo, null, reason, denyVend, declinedScreen('declined', o.code));
  const asked = o.currencies?.asked ?? ctx.currencyCode;
  const mismatch = { declineCode: o.code, asked, answered: o.currencies?.answered ?? 'another currency' };
  return { ...refused, effects: [...refused.effects, { tag: 'currency', mismatch }] };
}

export function voidAndClose(
  ctx: DynamicQrContext,
  paymentInfo: PaymentInfo,
  reason: VoidReason,
  denyVend: boolean,
  screen: Screen,
): Transition {
  const effects: DynamicQrEffect[] = [{ tag: 'void', paymentInfo, reason }];
  if (denyVend) effects.push(deny(ctx, reason.reasonText));
  effects.push({ tag: 'show', screen });
  return { state: { tag: 'closed', ctx, result: 'voided' }, effects };
}

export function declinedScreen(reason: DeclineReason, code: number | null = null): Screen {
  return { kind: 'declined', reason, code };
}

export function pollOrLast(state: Extract<DynamicQrState, { tag: 'polling' }>, nowMs: number): Transition {
  const { ctx } = state;
  // The last Inquiry is flagged so the gateway closes the QR on its side; after it, no answer
  // but Approved can mean money was taken.
  const isLast = nowMs + ctx.pollIntervalMs >= ctx.deadlineMs;
  const attempt = state.attempts + 1;
  return {
    state: { ...state, attempts: attempt, inFlight: true, lastSent: isLast },
    effects: [{ tag: 'inquire', attempt, isLast, qr: state.qr }],
  };
}

export function lastPollAfterCancel(state: Extract<DynamicQrState, { tag: 'polling' }>): Transition {
  const attempt = state.attempts + 1;
  return {
    state: { ...state, attempts: attempt, inFlight: true, lastSent: true },
    effects: [{ tag: 'inquire', attempt, isLast: true, qr: state.qr }],
  };
}
