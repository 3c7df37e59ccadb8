/**
 * Per-client token bucket for the Start endpoint (docs/decisions/reliability-bars.md: a source sending up to 10
 * requests a second is always served; beyond a configurable bound it is refused).
 *
 * A client is its remote address. Each bucket holds up to `burst` tokens and refills at
 * `perSecond`; a request takes one token or is refused. Time is an input (`nowMs`), so the
 * limiter is deterministic under test and holds no timers.
 *
 * Memory is bounded: a bucket that has refilled completely carries no information (a new bucket
 * would look the same), so such buckets are dropped when the table grows; if every tracked client
 * is still active, the least recently seen one is forgotten, which can only favour that client.
 */

export interface RateLimit {
  perSecond: number;
  burst: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export const DEFAULT_MAX_TRACKED_CLIENTS = 10_000;

export class ClientRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limit: RateLimit,
    private readonly maxTrackedClients: number = DEFAULT_MAX_TRACKED_CLIENTS,
  ) {
    if (!(limit.perSecond > 0) || !(limit.burst >= 1)) {
      throw new RangeError('rate limit needs perSecond > 0 and burst >= 1');
    }
  }

  /** Takes one token for `client` at time `nowMs`, or says how long until one is available. */
  take(client: string, nowMs: number): RateDecision {
    const bucket = this.refilled(client, nowMs);
    // Re-inserting keeps the Map in least-recently-seen order for eviction.
    this.buckets.delete(client);
    this.buckets.set(client, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    const retryAfterMs = Math.ceil(((1 - bucket.tokens) * 1000) / this.limit.perSecond);
    return { allowed: false, retryAfterMs };
  }

  /** Number of clients currently tracked (for stats and tests of the memory bound). */
  get trackedClients(): number {
    return this.buckets.size;
  }

  private refilled(client: string, nowMs: number): Bucket {
    const existing = this.buckets.get(client);
    if (existing === undefined) {
      this.makeRoom(nowMs);
      return { tokens: this.limit.burst, updatedMs: nowMs };
    }
    // A clock that goes backwards (tests, NTP steps on a monotonic misuse) must not mint tokens.
    const elapsedMs = Math.max(0, nowMs - existing.updatedMs);
    existing.tokens = Math.min(this.limit.burst, existing.tokens + (elapsedMs * this.limit.perSecond) / 1000);
    existing.updatedMs = Math.max(existing.updatedMs, nowMs);
    return existing;
  }

  private makeRoom(nowMs: number): void {
    if (this.buckets.size < this.maxTrackedClients) return;
    const fullAfterMs = (this.limit.burst * 1000) / this.limit.perSecond;
    for (const [client, bucket] of this.buckets) {
      if (nowMs - bucket.updatedMs >= fullAfterMs) this.buckets.delete(client);
    }
    while (this.buckets.size >= this.maxTrackedClients) {
      const oldest = this.buckets.keys().next().value;
      if (oldest === undefined) break;
      this.buckets.delete(oldest);
    }
  }
}
