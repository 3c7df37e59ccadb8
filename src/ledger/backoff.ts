/**
 * The outbox's retry schedule, pure: exponential backoff with full jitter (a uniformly random
 * delay below a ceiling that doubles per failure, capped), so that machines coming back online
 * together do not hammer the gateway in step. The retry window bounds the whole effort.
 */
import { RETRYABLE_DECLINE_CODES, type GatewayOutcome } from '../gateway/outcome.js';

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
  /** How long after enqueue (or a manual retry) a request is retried before it is dead-lettered. */
  windowMs: number;
}

/** The ceiling of the delay after the `failures`-th failure (1 = the first). */
export function backoffCeilingMs(policy: BackoffPolicy, failures: number): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 52);
  return Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
}

/** Full jitter: a delay drawn uniformly from [0, ceiling). `random` returns [0, 1). */
export function backoffDelayMs(policy: BackoffPolicy, failures: number, random: () => number): number {
  return Math.floor(random() * backoffCeilingMs(policy, failures));
}

export type Verdict =
  | { kind: 'delivered' }
  | { kind: 'retry'; atMs: number; error: string; code: number | null }
  | { kind: 'dead'; error: string; code: number | null };

function describeOutcome(outcome: GatewayOutcome<unknown>): { error: string; code: number | null } {
  switch (outcome.kind) {
    case 'approved':
      return { error: '', code: null };
    case 'declined':
      return { error: `declined ${outcome.code}${outcome.message ? `: ${outcome.message}` : ''}`, code: outcome.code };
    case 'transport':
      return {
        error:
          `transport ${outcome.failure}${outcome.httpStatus === null ? '' : ` (HTTP ${outcome.httpStatus})`}: ` +
          `${outcome.detail}`,
        code: null,
      };
  }
}

/**
 * What to do with a row after an attempt. `failures` counts this one; `windowStartedAtMs` is when
 * the row was enqueued (or retried by hand). The last retry is pulled in to the window's end so a
 * request always gets one attempt at the deadline before it is given up.
 */
export function judgeAttempt(
  outcome: GatewayOutcome<unknown>,
  policy: BackoffPolicy,
  failures: number,
  windowStartedAtMs: number,
  nowMs: number,
  random: () => number,
): Verdict {
  if (outcome.kind === 'approved') return { kind: 'delivered' };
  const { error, code } = describeOutcome(outcome);
  const retryable = outcome.kind === 'transport' || RETRYABLE_DECLINE_CODES.has(outcome.code);
  if (!retryable) return { kind: 'dead', error, code };
  const windowEnd = windowStartedAtMs + policy.windowMs;
  if (nowMs >= windowEnd)
    return { kind: 'dead', error: `retry window exhausted after ${failures} attempts; last: ${error}`, code };
  return { kind: 'retry', atMs: Math.min(nowMs + backoffDelayMs(policy, failures, random), windowEnd), error, code };
}
