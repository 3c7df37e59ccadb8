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
import type { GatewayOutcome } from '../../gateway/outcome.js';
import { DeclineCodes, type InquiryResponse } from '../../gateway/protocol/index.js';
import { amountText, GATEWAY_TIMEOUT_PAYMENT_INFO, minorOf, receivedPaymentInfo } from '../../gateway/wire/index.js';
import { isChargedVend } from '../../ipc/vend-outcome.js';
import type { DynamicQrInput, DynamicQrState, EndCause, IssuedQr, Transition, VoidReason } from './state.js';
import {
  closeUnpaid,
  declinedScreen,
  inquiryVerdict,
  lastPollAfterCancel,
  paidAgainstPrice,
  paymentInfoFromQr,
  PENDING,
  pollOrLast,
  refuseForeignCurrency,
  refusePaid,
  TIMED_OUT,
  voidAndClose,
  voidReason,
} from './transitions.js';

export type {
  DynamicQrContext,
  DynamicQrEffect,
  DynamicQrInput,
  DynamicQrRecord,
  DynamicQrResult,
  DynamicQrState,
  EndCause,
  IssuedQr,
  PaymentInfo,
  Transition,
  VoidReason,
} from './state.js';
export { initialState } from './state.js';
export { inquiryVerdict, paidAgainstPrice, paymentInfoFromQr } from './transitions.js';
export { GATEWAY_TIMEOUT_PAYMENT_INFO };

type Generating = Extract<DynamicQrState, { tag: 'generating' }>;
type Polling = Extract<DynamicQrState, { tag: 'polling' }>;
type Paid = Extract<DynamicQrState, { tag: 'paid' }>;
type InquiryOutcome = GatewayOutcome<Pick<InquiryResponse, 'PaymentInfo'>>;

/** One function per state; the switch is exhaustive, so a new state does not compile until it has one. */
export function step(state: DynamicQrState, input: DynamicQrInput): Transition {
  switch (state.tag) {
    case 'generating':
      return stepGenerating(state, input);
    case 'polling':
      return stepPolling(state, input);
    case 'paid':
      return stepPaid(state, input);
    case 'closed':
      return { state, effects: [] };
  }
}

function stepGenerating(state: Generating, input: DynamicQrInput): Transition {
  const ctx = state.ctx;
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

function stepPolling(state: Polling, input: DynamicQrInput): Transition {
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
      if (o.kind === 'approved') return inquiryApproved(state, o);
      return inquiryNotApproved(state, o);
    }
    default:
      return { state, effects: [] };
  }
}

function inquiryApproved(state: Polling, o: Extract<InquiryOutcome, { kind: 'approved' }>): Transition {
  const ctx = state.ctx;
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
    const priceText = amountText(minorOf(ctx.amount, ctx.decimalPlaces), ctx.decimalPlaces);
    const reason: VoidReason = {
      reasonCode: 3,
      reasonText: `amount paid below price: paid ${paidText}, price ${priceText}`,
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

function inquiryNotApproved(state: Polling, o: Exclude<InquiryOutcome, { kind: 'approved' }>): Transition {
  const ctx = state.ctx;
  const settled = { ...state, inFlight: false };
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
      return closeUnpaid(ctx, 'expired', code, 'payment not completed in time', declinedScreen('timed-out', code));
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

function stepPaid(state: Paid, input: DynamicQrInput): Transition {
  const ctx = state.ctx;
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
}
