/**
 * The Dynamic QR payment of one vend request, as a pure transition function (docs/decisions/sales-and-recovery.md):
 *
 *   generating --QR issued--> polling --Inquiry Approved--> paid --vend success/reset--> closed(vended)
 *        |                     |  ^ 993 pending: poll again       |--vend failed/cancelled/expired--> Void
 *        |                     |--final decline / last poll pending--> closed (nothing owed)
 *        |                     |--last poll unanswered--> Void {IsGatewayTimeout} (outcome unknown)
 *        |--declined/unanswered--> closed (the QR was never shown, nothing can be owed)
 *
 * No timers and no I/O here: the runner feeds gateway outcomes, timer expiries and MDB events in,
 * and carries out the effects that come back. Every path that may have taken the consumer's
 * money without a successful vend ends in a Void; every path that took none ends in a deny.
 */
import { RETRYABLE_DECLINE_CODES, type GatewayOutcome } from '../../gateway/outcome.js';
import { paymentInfoFromGenerateQR } from '../../gateway/envelope.js';
import { DeclineCodes, type GenerateQRResponse, type InquiryResponse } from '../../gateway/protocol/index.js';
import {
  amountText,
  authAmountOf,
  GATEWAY_TIMEOUT_PAYMENT_INFO,
  minorOf,
  receivedPaymentInfo,
  type RawJson,
} from '../../gateway/wire/index.js';
import type { DeclineReason, PaymentToMain, Screen, VendOutcome } from '../../ipc/messages.js';
import { isChargedVend } from '../../ipc/vend-outcome.js';

/** What GenerateQR answered, as far as this flow needs it. */
export interface IssuedQr {
  qrCode: string;
  rrn: string | null;
  srvTranId: string | null;
  channelId: string | null;
}

/** A PaymentInfo as JSON text: the gateway's exactly as received, or one composed from the QR. */
export type PaymentInfo = RawJson;

export interface DynamicQrContext {
  requestId: string;
  txId: string;
  amount: number;
  item: number;
  /** Epoch ms after which no Inquiry is sent except the last one. */
  /** On the runner's monotonic clock, like the poll-due inputs' nowMs. */
  deadlineMs: number;
  /** The same deadline on the wall clock, for the screen's countdown. */
  expiresAtWallMs: number;
  pollIntervalMs: number;
  currencyCode: string;
  decimalPlaces: number;
}

/** Why the VMC stopped waiting for this payment: it decides the Void's ReasonCode (2 consumer, 3 machine). */
export interface EndCause {
  reason: string;
  byConsumer: boolean;
}

export type DynamicQrState =
  | { tag: 'generating'; ctx: DynamicQrContext; ended: EndCause | null }
  | {
      tag: 'polling';
      ctx: DynamicQrContext;
      qr: IssuedQr;
      attempts: number;
      inFlight: boolean;
      lastSent: boolean;
      ended: EndCause | null;
    }
  | { tag: 'paid'; ctx: DynamicQrContext; qr: IssuedQr; paymentInfo: PaymentInfo }
  | { tag: 'closed'; ctx: DynamicQrContext; result: DynamicQrResult };

export type DynamicQrResult = 'vended' | 'declined' | 'expired' | 'not-issued' | 'voided' | 'cancelled';

export type DynamicQrInput =
  | { tag: 'generated'; outcome: GatewayOutcome<Pick<GenerateQRResponse, 'QRCode' | 'QRData'>> }
  | { tag: 'poll-due'; nowMs: number }
  | { tag: 'inquired'; outcome: GatewayOutcome<Pick<InquiryResponse, 'PaymentInfo'>> }
  /** The vend approved after payment ended this way (from the machine loop). */
  | { tag: 'vend-result'; outcome: VendOutcome }
  /** The VMC dropped the vend request before an approval was used (cancel, reset, timeout). */
  | { tag: 'request-ended'; reason: string; byConsumer: boolean };

/** Ledger transitions the runner records, in order, before carrying out later effects. */
export type DynamicQrRecord =
  | { tag: 'qr-issued'; qr: IssuedQr }
  /** `paidMinor`: the approving Inquiry's AuthAmount in minor units (null when it gave none). */
  | { tag: 'paid'; paymentInfo: PaymentInfo; paidMinor: number | null }
  | { tag: 'vend-approved' }
  | { tag: 'vended' }
  | {
      tag: 'closed-unpaid';
      result: 'declined' | 'expired' | 'not-issued' | 'cancelled';
      code: number | null;
      detail: string;
    };

export type VoidReason = { reasonCode: 0 | 2 | 3; reasonText: string };

export type DynamicQrEffect =
  | { tag: 'record'; record: DynamicQrRecord }
  | { tag: 'inquire'; attempt: number; isLast: boolean; qr: IssuedQr }
  | { tag: 'schedule-poll'; inMs: number }
  /** Write a Void to the outbox (in the same ledger transaction as closing the payment). */
  | { tag: 'void'; paymentInfo: PaymentInfo; reason: VoidReason }
  | { tag: 'main'; message: PaymentToMain }
  | { tag: 'show'; screen: Screen }
  /**
   * The alarm GATEWAY_CURRENCY_MISMATCH (src/flows/currency-alarm.ts): raised naming the gateway's
   * answer when it reports the payment paid in another currency than asked; cleared (null) by a
   * payment approved in the currency asked.
   */
  | { tag: 'currency'; mismatch: { declineCode: number; asked: string; answered: string } | null };

export interface Transition {
  state: DynamicQrState;
  effects: DynamicQrEffect[];
}

const PENDING = 993;
const TIMED_OUT = 992;

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

function voidReason(cause: EndCause, text: string): VoidReason {
  return { reasonCode: cause.byConsumer ? 2 : 3, reasonText: `${text}: ${cause.reason}` };
}

/** PaymentInfo for an Inquiry before any Inquiry approved: composed from GenerateQR (docs/decisions/gateway-interface.md). */
export function paymentInfoFromQr(qr: IssuedQr, amount: number, decimalPlaces: number): PaymentInfo {
  return paymentInfoFromGenerateQR(
    { QRData: { SrvTranId: qr.srvTranId ?? undefined, RRN: qr.rrn ?? undefined } },
    amount,
    decimalPlaces,
  );
}

export { GATEWAY_TIMEOUT_PAYMENT_INFO };

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

export function initialState(ctx: DynamicQrContext): DynamicQrState {
  return { tag: 'generating', ctx, ended: null };
}

function deny(ctx: DynamicQrContext, reason: string): DynamicQrEffect {
  return { tag: 'main', message: { type: 'vend.deny', requestId: ctx.requestId, reason } };
}

function closeUnpaid(
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
function refusePaid(
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
function refuseForeignCurrency(
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

function voidAndClose(
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

function declinedScreen(reason: DeclineReason, code: number | null = null): Screen {
  return { kind: 'declined', reason, code };
}

function pollOrLast(state: Extract<DynamicQrState, { tag: 'polling' }>, nowMs: number): Transition {
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

function lastPollAfterCancel(state: Extract<DynamicQrState, { tag: 'polling' }>): Transition {
  const attempt = state.attempts + 1;
  return {
    state: { ...state, attempts: attempt, inFlight: true, lastSent: true },
    effects: [{ tag: 'inquire', attempt, isLast: true, qr: state.qr }],
  };
}

export function step(state: DynamicQrState, input: DynamicQrInput): Transition {
  const ctx = state.ctx;
  switch (state.tag) {
    case 'generating':
      if (input.tag === 'request-ended')
        return { state: { ...state, ended: { reason: input.reason, byConsumer: input.byConsumer } }, effects: [] };
      if (input.tag !== 'generated') return { state, effects: [] };
      if (input.outcome.kind !== 'approved') {
        const detail =
          input.outcome.kind === 'declined'
            ? `GenerateQR declined (code ${input.outcome.code})`
            : `GenerateQR failed: ${input.outcome.failure}`;
        return closeUnpaid(
          ctx,
          'not-issued',
          input.outcome.kind === 'declined' ? input.outcome.code : null,
          detail,
          declinedScreen('qr-unavailable', input.outcome.kind === 'declined' ? input.outcome.code : null),
        );
      }
      {
        const r = input.outcome.response;
        const qr: IssuedQr = {
          qrCode: r.QRCode ?? '',
          rrn: r.QRData?.RRN ?? null,
          srvTranId: r.QRData?.SrvTranId ?? null,
          channelId: r.QRData?.ChannelId ?? null,
        };
        if (state.ended) {
          // The consumer walked away before the QR existed: it is never shown, so nobody can pay it.
          return {
            state: { tag: 'closed', ctx, result: 'cancelled' },
            effects: [
              { tag: 'record', record: { tag: 'qr-issued', qr } },
              {
                tag: 'record',
                record: {
                  tag: 'closed-unpaid',
                  result: 'cancelled',
                  code: null,
                  detail: 'vend request ended before the QR was shown',
                },
              },
            ],
          };
        }
        return {
          state: { tag: 'polling', ctx, qr, attempts: 0, inFlight: false, lastSent: false, ended: null },
          effects: [
            { tag: 'record', record: { tag: 'qr-issued', qr } },
            {
              tag: 'show',
              screen: {
                kind: 'dynamic-qr',
                qrText: qr.qrCode,
                amount: ctx.amount,
                currencyCode: ctx.currencyCode,
                decimalPlaces: ctx.decimalPlaces,
                item: ctx.item,
                expiresAtMs: ctx.expiresAtWallMs,
              },
            },
            { tag: 'schedule-poll', inMs: ctx.pollIntervalMs },
          ],
        };
      }

    case 'polling':
      switch (input.tag) {
        case 'poll-due':
          if (state.inFlight || state.ended) return { state, effects: [] };
          return pollOrLast(state, input.nowMs);
        case 'request-ended': {
          // The VMC no longer waits, but the consumer may be paying right now. Ask once more,
          // flagged as the last poll so the gateway closes the QR; that answer decides.
          const ended: EndCause = { reason: input.reason, byConsumer: input.byConsumer };
          if (state.inFlight) return { state: { ...state, ended }, effects: [] };
          return lastPollAfterCancel({ ...state, ended });
        }
        case 'inquired': {
          const o = input.outcome;
          const settled = { ...state, inFlight: false };
          if (o.kind === 'approved') {
            const paymentInfo = receivedPaymentInfo(o) ?? paymentInfoFromQr(state.qr, ctx.amount, ctx.decimalPlaces);
            if (state.ended) {
              return voidAndClose(
                ctx,
                paymentInfo,
                voidReason(state.ended, 'paid after the vend request ended'),
                false,
                declinedScreen('cancelled-reversed'),
              );
            }
            const { short, paidMinor } = paidAgainstPrice(paymentInfo, ctx);
            if (short) {
              // Approved for less than the price: no vend, and what was taken goes back
              // (docs/decisions/gateway-interface.md).
              const paidText = paidMinor === null ? 'less' : amountText(paidMinor, ctx.decimalPlaces);
              const reason: VoidReason = {
                reasonCode: 3,
                reasonText: `amount paid below price: paid ${paidText}, price ${amountText(minorOf(ctx.amount, ctx.decimalPlaces), ctx.decimalPlaces)}`,
              };
              return refusePaid(ctx, paymentInfo, paidMinor, reason, true, declinedScreen('underpaid-reversed'));
            }
            return {
              state: { tag: 'paid', ctx, qr: state.qr, paymentInfo },
              effects: [
                // Both records first: if the disk refuses them, the vend is not approved and the
                // payment stays 'paid' in the ledger, which recovery voids.
                { tag: 'record', record: { tag: 'paid', paymentInfo, paidMinor } },
                { tag: 'record', record: { tag: 'vend-approved' } },
                {
                  tag: 'main',
                  message: { type: 'vend.approve', requestId: ctx.requestId, txId: ctx.txId, amount: ctx.amount },
                },
                {
                  tag: 'show',
                  screen: {
                    kind: 'vending',
                    amount: ctx.amount,
                    currencyCode: ctx.currencyCode,
                    decimalPlaces: ctx.decimalPlaces,
                    item: ctx.item,
                  },
                },
                { tag: 'currency', mismatch: null },
              ],
            };
          }
          if (o.kind === 'declined' && o.heldFunds === true) {
            return refuseForeignCurrency(ctx, state.qr, o, !state.ended);
          }
          const verdict = inquiryVerdict(o, state.lastSent);
          const code = o.kind === 'declined' ? o.code : null;
          if (verdict === 'unpaid') {
            if (state.ended) {
              return {
                state: { tag: 'closed', ctx, result: 'cancelled' },
                effects: [
                  {
                    tag: 'record',
                    record: {
                      tag: 'closed-unpaid',
                      result: 'cancelled',
                      code,
                      detail: 'vend request ended before payment',
                    },
                  },
                ],
              };
            }
            if (state.lastSent && (code === PENDING || code === TIMED_OUT)) {
              // Not paid by the last poll: the gateway closed the QR on IsLastPolling, nothing was taken.
              return closeUnpaid(
                ctx,
                'expired',
                code,
                'payment not completed in time',
                declinedScreen('timed-out', code),
              );
            }
            return closeUnpaid(
              ctx,
              'declined',
              code,
              `payment declined (code ${code})`,
              declinedScreen(code === DeclineCodes.InsufficientFunds ? 'insufficient-funds' : 'declined', code),
            );
          }
          if (!state.lastSent) {
            // Pending, or no verdict yet: ask again (at once and for the last time when the VMC gave up).
            if (state.ended) return lastPollAfterCancel(settled);
            return { state: settled, effects: [{ tag: 'schedule-poll', inMs: ctx.pollIntervalMs }] };
          }
          // The last poll brought no verdict: the consumer may have paid. Void whatever was taken.
          if (state.ended) {
            return voidAndClose(
              ctx,
              GATEWAY_TIMEOUT_PAYMENT_INFO,
              voidReason(state.ended, 'vend request ended, payment outcome unknown'),
              false,
              declinedScreen('cancelled'),
            );
          }
          return voidAndClose(
            ctx,
            GATEWAY_TIMEOUT_PAYMENT_INFO,
            { reasonCode: 3, reasonText: 'payment outcome unknown: the last Inquiry brought no verdict' },
            true,
            declinedScreen('timed-out', code),
          );
        }
        default:
          return { state, effects: [] };
      }

    case 'paid':
      if (input.tag === 'vend-result') {
        // A reset between the approval and the result is a success (MDB 4.2 7.4.7): the sale stands, no Void.
        if (isChargedVend(input.outcome)) {
          return {
            state: { tag: 'closed', ctx, result: 'vended' },
            effects: [
              { tag: 'record', record: { tag: 'vended' } },
              {
                tag: 'show',
                screen: {
                  kind: 'thank-you',
                  amount: ctx.amount,
                  currencyCode: ctx.currencyCode,
                  decimalPlaces: ctx.decimalPlaces,
                  txId: ctx.txId,
                },
              },
            ],
          };
        }
        const consumer = input.outcome === 'cancelled';
        return voidAndClose(
          ctx,
          state.paymentInfo,
          consumer
            ? { reasonCode: 2, reasonText: 'cancelled by consumer after payment' }
            : { reasonCode: 3, reasonText: `vend ${input.outcome}` },
          false,
          declinedScreen(consumer ? 'cancelled-reversed' : 'vend-failed-reversed'),
        );
      }
      if (input.tag === 'request-ended') {
        return voidAndClose(
          ctx,
          state.paymentInfo,
          voidReason({ reason: input.reason, byConsumer: input.byConsumer }, 'vend request ended after payment'),
          false,
          declinedScreen('cancelled-reversed'),
        );
      }
      return { state, effects: [] };

    case 'closed':
      return { state, effects: [] };
  }
}
