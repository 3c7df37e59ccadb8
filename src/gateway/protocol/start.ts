/**
 * Static QR Start: the request a wallet backend sends to qrvend, and qrvend's answer.
 *
 * Decisions where the seed is silent (docs/protocol-decisions.md):
 * - The consumer-data object is named `ConsumerData`: any JSON object, echoed back unchanged in
 *   the Start response.
 * - UniQR and TransactionId are strings; UniQR is limited to 255 characters like TerminalId.
 * - "length N" is read as "at most N characters" (at least 1; TransactionId at least 8).
 * - Balance is a JSON number, not negative, with at most 3 decimal digits.
 * - The Start response carries Status, the TransactionId and the ConsumerData echo.
 */
import { z } from 'zod';
import { maxText, requiredText } from './primitives.js';
import { StatusSchema } from './status.js';
import { validateWith, type ValidationProblem } from './validate.js';

export const START_LIMITS = {
  AppUserId: 40,
  SecretToken: 64,
  TerminalId: 255,
  UniQR: 255,
  TransactionIdMin: 8,
  TransactionIdMax: 40,
  BalanceDecimals: 3,
} as const;

/**
 * Start TransactionId: 8..40 printable ASCII characters. The id travels to the gateway, the
 * ledger and the technician's terminal: CR/LF, escape sequences and bidi controls are refused
 * here (docs/decisions/hardening.md item 2) rather than escaped at every place it lands.
 */
export const StartTransactionIdSchema = z
  .string()
  .min(START_LIMITS.TransactionIdMin, `must be at least ${START_LIMITS.TransactionIdMin} characters`)
  .max(START_LIMITS.TransactionIdMax, `must be at most ${START_LIMITS.TransactionIdMax} characters`)
  .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII (no control, escape or non-ASCII characters)');

/** A JSON object from a third party, echoed back in the Start response. */
export const ConsumerDataSchema = z.record(z.string(), z.unknown());

const BALANCE_DECIMALS = new RegExp(`^-?\\d+(\\.\\d{1,${START_LIMITS.BalanceDecimals}})?$`);
/** The largest Balance whose thousandths are still counted exactly (a safe integer of 0.001 units). */
export const BALANCE_MAX = Math.floor(Number.MAX_SAFE_INTEGER / 10 ** START_LIMITS.BalanceDecimals);
export const BalanceSchema = z
  .number()
  .finite('must be a finite number')
  .min(0, 'must not be negative')
  // Checked before the decimals: 1e21 prints as "1e+21", which is too large, not too precise.
  .max(BALANCE_MAX, `is too large (at most ${BALANCE_MAX})`)
  .refine(
    (n) => n > BALANCE_MAX || BALANCE_DECIMALS.test(String(n)),
    `must have at most ${START_LIMITS.BalanceDecimals} decimal digits`,
  );

export const StartRequestSchema = z
  .object({
    AppUserId: requiredText(START_LIMITS.AppUserId),
    SecretToken: requiredText(START_LIMITS.SecretToken),
    TerminalId: requiredText(START_LIMITS.TerminalId).nullish(),
    UniQR: requiredText(START_LIMITS.UniQR).nullish(),
    TransactionId: StartTransactionIdSchema,
    Balance: BalanceSchema.nullish(),
    ConsumerData: ConsumerDataSchema.nullish(),
  })
  .superRefine((r, ctx) => {
    if (r.TerminalId == null && r.UniQR == null) {
      ctx.addIssue({
        code: 'custom',
        path: ['TerminalId'],
        message: 'TerminalId or UniQR is required',
        params: { missing: true },
      });
    }
  });

export type StartRequest = z.infer<typeof StartRequestSchema>;

export const StartResponseSchema = z.strictObject({
  Status: StatusSchema,
  TransactionId: maxText(START_LIMITS.TransactionIdMax).nullish(),
  ConsumerData: ConsumerDataSchema.nullish(),
});

export type StartResponse = z.infer<typeof StartResponseSchema>;

export type StartValidation = { ok: true; value: StartRequest } | (ValidationProblem & { code: 997 | 998 });

/**
 * Validates a Start body. On failure: code 997 when a mandatory member is missing (TerminalId
 * when neither TerminalId nor UniQR is sent), 998 for any other violation, and the member path.
 * The message never contains a member's value, so the SecretToken cannot leak through it.
 */
export function validateStartRequest(body: unknown): StartValidation {
  return validateWith(StartRequestSchema, body);
}
