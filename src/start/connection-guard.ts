/**
 * Who may hold the Start endpoint's connections (docs/decisions/hardening.md item 1: 64 slow-header connections
 * from one address starved every other wallet). Decided when a connection is accepted, before a
 * byte is parsed:
 *
 *   - one source address holds at most `perSource` connections at once;
 *   - a source that misbehaved lately (a connection cut for a slow head or body, or refused at its
 *     cap) is "suspect" for `suspectForMs`; all suspects together hold at most `suspectShare` of
 *     the budget, so the rest stays for sources that behave, however many addresses an attacker has;
 *   - the whole endpoint holds at most `total` (Node's maxConnections stays as a backstop).
 *
 * Pure bookkeeping: time comes in as an argument (the monotonic clock), no timers here.
 */

export interface ConnectionGuardLimits {
  total: number;
  perSource: number;
  /** Fraction of `total` that suspect sources may hold together, 0..1. */
  suspectShare: number;
  suspectForMs: number;
}

export type AdmitDecision = { admit: true } | { admit: false; reason: 'source-cap' | 'suspect-share' | 'total' };

interface Source {
  open: number;
  suspectUntilMs: number;
}

export class ConnectionGuard {
  private readonly sources = new Map<string, Source>();
  private open = 0;
  private openBySuspects = 0;
  /** Connections refused at accept time, by reason (for stats and doctor). */
  readonly refused = { 'source-cap': 0, 'suspect-share': 0, total: 0 };

  constructor(private readonly limits: ConnectionGuardLimits) {
    if (!(limits.perSource >= 1) || !(limits.total >= limits.perSource))
      throw new RangeError('connection guard needs total >= perSource >= 1');
  }

  /** A new connection from `source`: admit it (the caller must call release() when it closes) or refuse it. */
  admit(source: string, nowMs: number): AdmitDecision {
    const entry = this.sources.get(source) ?? { open: 0, suspectUntilMs: 0 };
    const suspect = entry.suspectUntilMs > nowMs;
    let reason: 'source-cap' | 'suspect-share' | 'total' | null = null;
    if (entry.open >= this.limits.perSource) reason = 'source-cap';
    else if (suspect && this.openBySuspects >= Math.floor(this.limits.total * this.limits.suspectShare))
      reason = 'suspect-share';
    else if (this.open >= this.limits.total) reason = 'total';
    if (reason !== null) {
      this.refused[reason] += 1;
      // Knocking at the cap is itself misbehaviour: it keeps the source in the suspect pool.
      if (reason === 'source-cap') this.markSuspect(source, nowMs, entry);
      return { admit: false, reason };
    }
    entry.open += 1;
    this.open += 1;
    if (suspect) this.openBySuspects += 1;
    this.sources.set(source, entry);
    return { admit: true };
  }

  /** A connection admitted for `source` closed. */
  release(source: string, nowMs: number): void {
    const entry = this.sources.get(source);
    if (entry === undefined || entry.open === 0) return;
    entry.open -= 1;
    this.open -= 1;
    this.recount(nowMs);
    if (entry.open === 0 && entry.suspectUntilMs <= nowMs) this.sources.delete(source);
  }

  /** `source` held a connection without sending a request in time (or the like). */
  strike(source: string, nowMs: number): void {
    const entry = this.sources.get(source) ?? { open: 0, suspectUntilMs: 0 };
    this.markSuspect(source, nowMs, entry);
    this.recount(nowMs);
  }

  get openConnections(): number {
    return this.open;
  }

  get trackedSources(): number {
    return this.sources.size;
  }

  private markSuspect(source: string, nowMs: number, entry: Source): void {
    entry.suspectUntilMs = nowMs + this.limits.suspectForMs;
    this.sources.set(source, entry);
  }

  /** Suspect status changes with time and strikes: the pool count is recomputed (few sources have open connections). */
  private recount(nowMs: number): void {
    let suspects = 0;
    for (const [source, entry] of this.sources) {
      if (entry.suspectUntilMs > nowMs) suspects += entry.open;
      else if (entry.open === 0) this.sources.delete(source);
    }
    this.openBySuspects = suspects;
  }
}
