/**
 * Dynamic QR operations: GenerateQR (seed) and Inquiry, Void (docs/decisions/gateway-interface.md). Inquiry and Void
 * requests and responses are closed, Polling has exactly its two members, and the GenerateQR
 * response is closed. One opening: an Inquiry answer may name the currency it was paid in (a
 * BasicInfo), so that a payment in another currency is refused as such, not as a malformed answer.
 */
import { z } from 'zod';
import { checkAmountDecimals } from './amount-rule.js';
import {
  RequestHeadMembers as common,
  PaymentInfoSchema,
  ProductItemSchema,
  ReasonCodeSchema,
  ReasonTextSchema,
} from './objects.js';
import { currencyCode, currencyNumeric, int32 } from './primitives.js';
import { StatusSchema } from './status.js';

export const GenerateQRRequestSchema = z
  .object({
    ...common,
    ChannelId: z.string().nullish(),
    PaymentInfo: PaymentInfoSchema.nullish(),
    Product: z.array(ProductItemSchema).nullish(),
  })
  .superRefine(checkAmountDecimals);
export type GenerateQRRequest = z.infer<typeof GenerateQRRequestSchema>;

export const QRDataSchema = z.object({
  ChannelId: z.string().nullish(),
  RRN: z.string().nullish(),
  SrvTranId: z.string().nullish(),
});
export type QRData = z.infer<typeof QRDataSchema>;

/** An approved GenerateQR must carry the QR text to show; without it there is nothing to scan. */
export const GenerateQRResponseSchema = z
  .strictObject({ QRCode: z.string().nullish(), QRData: QRDataSchema.nullish(), Status: StatusSchema })
  .superRefine((r, ctx) => {
    if (r.Status.Verdict === 'Approved' && (r.QRCode == null || r.QRCode === '')) {
      ctx.addIssue({
        code: 'custom',
        path: ['QRCode'],
        message: 'is required when approved',
        params: { missing: true },
      });
    }
  });
export type GenerateQRResponse = z.infer<typeof GenerateQRResponseSchema>;

export const PollingSchema = z.strictObject({
  IsLastPolling: z.boolean(),
  PollingAttemptCounter: int32.min(0, 'must not be negative'),
});
export type Polling = z.infer<typeof PollingSchema>;

export const InquiryRequestSchema = z
  .strictObject({
    ...common,
    PaymentInfo: PaymentInfoSchema,
    Polling: PollingSchema,
    Products: z.array(ProductItemSchema).nullish(),
  })
  .superRefine(checkAmountDecimals);
export type InquiryRequest = z.infer<typeof InquiryRequestSchema>;

/**
 * An Inquiry answer's BasicInfo, read only for the currency the consumer paid in: an approval in
 * another currency than asked is refused (src/gateway/currency-check.ts). Its other members are
 * ignored; the answer as a whole is bounded like every answer (MAX_RESPONSE_BYTES, src/gateway/client.ts).
 */
export const PaidCurrencySchema = z.object({
  CurrencyCode: currencyCode.nullish(),
  CurrencyNumeric: currencyNumeric.nullish(),
});

export const InquiryResponseSchema = z.strictObject({
  BasicInfo: PaidCurrencySchema.nullish(),
  PaymentInfo: PaymentInfoSchema.nullish(),
  Status: StatusSchema,
});
export type InquiryResponse = z.infer<typeof InquiryResponseSchema>;

export const VoidRequestSchema = z
  .strictObject({
    ...common,
    PaymentInfo: PaymentInfoSchema,
    ReasonCode: ReasonCodeSchema.nullish(),
    ReasonText: ReasonTextSchema.nullish(),
  })
  .superRefine(checkAmountDecimals);
export type VoidRequest = z.infer<typeof VoidRequestSchema>;

export const VoidResponseSchema = z.strictObject({ PaymentInfo: PaymentInfoSchema.nullish(), Status: StatusSchema });
export type VoidResponse = z.infer<typeof VoidResponseSchema>;
