/**
 * When a failed delivery is tried again (docs/console.md "Deliveries"): the schedule Standard
 * Webhooks suggests, after an immediate first attempt 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and
 * 10 h, so the last attempt comes 27.6 hours after the first, past a whole day of a receiver
 * being down. A delivery whose last attempt failed is given up (its endpoint disabled).
 */
const S = 1000;
export const RETRY_DELAYS_MS: readonly number[] = [
  5 * S,
  300 * S,
  1800 * S,
  7200 * S,
  18_000 * S,
  36_000 * S,
  36_000 * S,
];

/** Attempts a delivery gets in all. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** The wait after failed attempt number `attempts` (1-based), or null when it was the last. */
export function retryDelayMs(attempts: number): number | null {
  return RETRY_DELAYS_MS[attempts - 1] ?? null;
}
