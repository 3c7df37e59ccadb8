/**
 * The runtime control endpoint (`POST /_sim/control`): a test steers a running simulator by
 * setting faults, behaviour rules and the random seed, or by clearing the ledger. The body is
 * validated like any other input; a bad one gets HTTP 400 naming the member.
 */
import { z } from 'zod';
import { GATEWAY_OPERATIONS, memberPath } from '../../gateway/protocol/index.js';
import type { BehaviourRule } from './behaviours.js';
import { FAULT_KINDS, type FaultSpec } from './faults.js';

const Op = z.enum(GATEWAY_OPERATIONS);
/** A decline code: never 0 (a Declined status with Code 0 is not a decline a strict gateway sends). */
const code = z.number().int().min(1, 'a decline needs a decline code (not 0)').max(2147483647);

const BehaviourSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('approve') }),
  z.strictObject({
    kind: z.literal('approve-in-currency'),
    currencyCode: z.string().regex(/^[A-Z]{3}$/),
    currencyNumeric: z.string().regex(/^\d{3}$/),
  }),
  z.strictObject({ kind: z.literal('decline'), code, message: z.string().max(200).optional() }),
  z.strictObject({ kind: z.literal('pay-after-polls'), polls: z.number().int().min(0).max(10_000) }),
  z.strictObject({ kind: z.literal('pay-after-ms'), ms: z.number().int().min(0).max(3_600_000) }),
  z.strictObject({ kind: z.literal('never-pay') }),
  z.strictObject({ kind: z.literal('decline-at-inquiry'), code }),
  z.strictObject({ kind: z.literal('pay-amount'), amount: z.number().finite().min(0) }),
]);

const RuleSchema = z.strictObject({
  op: Op,
  transactionId: z.string().optional(),
  amount: z.number().optional(),
  times: z.number().int().min(1).optional(),
  behaviour: BehaviourSchema,
});

const FaultSchema = z.strictObject({
  kind: z.enum(FAULT_KINDS),
  rate: z.number().min(0).max(1),
  ops: z.array(Op).optional(),
  times: z.number().int().min(1).optional(),
});

export const ControlSchema = z.strictObject({
  /** Replace the active faults ([] = none). */
  faults: z.array(FaultSchema).optional(),
  /** Restart the fault PRNG with this seed. */
  seed: z.number().int().optional(),
  /** Replace the behaviour rules ([] = only the amount table). */
  rules: z.array(RuleSchema).optional(),
  /** Append behaviour rules. */
  addRules: z.array(RuleSchema).optional(),
  /** How long a `hang` fault holds the request, in ms. */
  hangMs: z.number().int().min(0).max(600_000).optional(),
  /** Forget every recorded transaction. */
  resetLedger: z.boolean().optional(),
});

export type ControlCommand = z.infer<typeof ControlSchema>;

export function parseControl(body: unknown): { ok: true; value: ControlCommand } | { ok: false; error: string } {
  const parsed = ControlSchema.safeParse(body);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue ? memberPath(issue.path) || '(body)' : '(body)';
  return { ok: false, error: `${where}: ${issue?.message ?? 'invalid'}` };
}

// The schema's output must stay assignable to the engine's types (a compile-time check).
export const asRule = (r: z.infer<typeof RuleSchema>): BehaviourRule => r;
export const asFault = (f: z.infer<typeof FaultSchema>): FaultSpec => f;
