/**
 * Static QR operations qrvend calls: Authorization, Settlement, Cancel (seed, Endpoints).
 * Top-level members other than BasicInfo are optional in the seed; Cancel's request and
 * response are closed (StaticCancelRequest/StaticCancelResponse).
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
import { StatusSchema } from './status.js';

export const AuthorizationRequestSchema = z.object(common).superRefine(checkAmountDecimals);
export type AuthorizationRequest = z.infer<typeof AuthorizationRequestSchema>;

/** An approved Authorization must say what it authorized (PaymentInfo), or the session has no funds. */
export const AuthorizationResponseSchema = z
  .object({ PaymentInfo: PaymentInfoSchema.nullish(), Status: StatusSchema })
  .superRefine((r, ctx) => {
    if (r.Status.Verdict === 'Approved' && r.PaymentInfo == null) {
      ctx.addIssue({
        code: 'custom',
        path: ['PaymentInfo'],
        message: 'is required when approved',
        params: { missing: true },
      });
    }
  });
export type AuthorizationResponse = z.infer<typeof AuthorizationResponseSchema>;

export const SettlementRequestSchema = z
  .object({ ...common, PaymentInfo: PaymentInfoSchema.nullish(), Products: z.array(ProductItemSchema).nullish() })
  .superRefine(checkAmountDecimals);
export type SettlementRequest = z.infer<typeof SettlementRequestSchema>;

export const SettlementResponseSchema = z.object({ Status: StatusSchema });
export type SettlementResponse = z.infer<typeof SettlementResponseSchema>;

export const CancelRequestSchema = z
  .strictObject({
    ...common,
    PaymentInfo: PaymentInfoSchema.nullish(),
    ReasonCode: ReasonCodeSchema.nullish(),
    ReasonText: ReasonTextSchema.nullish(),
  })
  .superRefine(checkAmountDecimals);
export type CancelRequest = z.infer<typeof CancelRequestSchema>;

export const CancelResponseSchema = z.strictObject({ Status: StatusSchema });
export type CancelResponse = z.infer<typeof CancelResponseSchema>;
