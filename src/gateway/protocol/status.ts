/**
 * Status, carried by every response. Verdict is mandatory; Code only accompanies a Declined
 * verdict (an Approved GenerateQR may carry 0); CustomDeclineCode mirrors Code.
 */
import { z } from 'zod';
import { int32, maxText, truncateText } from './primitives.js';

export const VERDICTS = ['Approved', 'Declined'] as const;
export const VerdictSchema = z.enum(VERDICTS);
export type Verdict = z.infer<typeof VerdictSchema>;

export const STATUS_MESSAGE_MAX = 255;

export const StatusSchema = z
  .strictObject({
    Verdict: VerdictSchema,
    Code: int32.nullish(),
    CustomDeclineCode: int32.nullish(),
    StatusMessage: maxText(STATUS_MESSAGE_MAX).nullish(),
  })
  .superRefine((s, ctx) => {
    const hasCode = s.Code !== undefined && s.Code !== null;
    if (s.Verdict === 'Declined' && !hasCode) {
      ctx.addIssue({
        code: 'custom',
        path: ['Code'],
        message: 'is required when Verdict is Declined',
        params: { missing: true },
      });
    }
    if (s.Verdict === 'Approved' && hasCode && s.Code !== 0) {
      ctx.addIssue({ code: 'custom', path: ['Code'], message: 'must be absent or 0 when Verdict is Approved' });
    }
    const hasCustom = s.CustomDeclineCode !== undefined && s.CustomDeclineCode !== null;
    if (hasCode && hasCustom && s.CustomDeclineCode !== s.Code) {
      ctx.addIssue({ code: 'custom', path: ['CustomDeclineCode'], message: 'must mirror Code' });
    }
  });

export type Status = z.infer<typeof StatusSchema>;

/** An Approved Status. */
export function approvedStatus(message?: string): Status {
  return message === undefined ? { Verdict: 'Approved' } : { Verdict: 'Approved', StatusMessage: clip(message) };
}

/** A Declined Status with Code and its mirror CustomDeclineCode. Code 0 is not a decline reason. */
export function declinedStatus(code: number, message: string): Status {
  if (!Number.isInteger(code) || code === 0)
    throw new RangeError(`a Declined status needs a decline code, not ${code}`);
  return { Verdict: 'Declined', Code: code, CustomDeclineCode: code, StatusMessage: clip(message) };
}

function clip(message: string): string {
  return truncateText(message, STATUS_MESSAGE_MAX, true);
}
