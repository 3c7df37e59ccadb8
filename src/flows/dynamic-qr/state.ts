/**
 * The Dynamic QR payment's states, inputs and effects (docs/decisions/sales-and-recovery.md): the
 * vocabulary of the pure transition function in machine.ts, kept apart so the transitions read alone.
 */
import type { GatewayOutcome } from '../../gateway/outcome.js';
import type { GenerateQRResponse, InquiryResponse } from '../../gateway/protocol/index.js';
import type { RawJson } from '../../gateway/wire/index.js';
import type { PaymentToMain, Screen, VendOutcome } from '../../ipc/messages.js';

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

export function initialState(ctx: DynamicQrContext): DynamicQrState {
  return { tag: 'generating', ctx, ended: null };
}
