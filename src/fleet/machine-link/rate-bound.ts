/**
 * Token buckets for incoming commands: a flood is counted and dropped (not answered, so a flood
 * cannot make the device flood back). Time is an input; no timers.
 */
export class CommandRateBound {
  private tokens: number;
  private updatedMs: number;
  dropped = 0;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    nowMs: number,
  ) {
    this.tokens = burst;
    this.updatedMs = nowMs;
  }

  /** One token, leaving at least `keep` (a reserve for others); false: dropped (counted). */
  take(nowMs: number, keep = 0): boolean {
    const elapsed = Math.max(0, nowMs - this.updatedMs);
    this.tokens = Math.min(this.burst, this.tokens + (elapsed / 1000) * this.perSecond);
    this.updatedMs = nowMs;
    if (this.tokens >= 1 + keep) {
      this.tokens -= 1;
      return true;
    }
    this.dropped += 1;
    return false;
  }
}

/**
 * One budget per kind of work and per source (docs/security.md, "Budgets per source"; one 10/s
 * bucket for everything let three sources of relayed Starts at 18/s make one operator ping in five
 * go unanswered, and one shared intake let a flood naming unknown keys silence the operators):
 * - `untrusted`: every message that names no key of the trust file (unsigned, an unknown key,
 *   unreadable), before it is parsed (intake.ts): a flood of it cannot reach the shares below;
 * - `trusted`: every command message that names a key of the trust file, before it is parsed;
 * - `start`: relayed Starts (`cmd/start`) and confirmations (`start.confirm`) that name a trusted
 *   key, before they are parsed: the relay's share, which operators' commands never spend. A
 *   relay's confirmation of a Start held here spends no budget at all: its signature is checked
 *   first (held-starts.ts);
 * - `verify`: Ed25519 checks, spent only by a signature that passed the free checks (known key,
 *   its scope, the window), so an unsigned, unknown-key or stale flood never spends it; a `read`
 *   signature leaves a reserve in it for `operate` and `configure` (key-budgets.ts);
 * - `unsigned`: read-only commands taken unsigned (fleet.allowUnsignedReads);
 * - `refusals`: error replies (refused, malformed) to what names no trusted key; beyond it a
 *   refusal is dropped unanswered; `trustedRefusals` the same for what names one, so a junk flood
 *   cannot mute the answer an operator's refused command is owed.
 * A command whose signature checked spends its own key's budget for its scope (key-budgets.ts),
 * not one shared by every key: a leaked `read` key's pings cannot starve an operator's
 * reader.disable (docs/security.md, "Budgets and nonce shares per key").
 */
export const COMMAND_BUDGETS = {
  untrusted: { perSecond: 50, burst: 100 },
  trusted: { perSecond: 300, burst: 300 },
  start: { perSecond: 20, burst: 40 },
  verify: { perSecond: 200, burst: 200 },
  unsigned: { perSecond: 5, burst: 10 },
  refusals: { perSecond: 5, burst: 10 },
  trustedRefusals: { perSecond: 5, burst: 10 },
} as const;
export type CommandBudget = keyof typeof COMMAND_BUDGETS;

export class CommandBudgets {
  private readonly buckets: Record<CommandBudget, CommandRateBound>;

  constructor(nowMs: number, budgets: Record<CommandBudget, { perSecond: number; burst: number }> = COMMAND_BUDGETS) {
    this.buckets = Object.fromEntries(
      Object.entries(budgets).map(([k, b]) => [k, new CommandRateBound(b.perSecond, b.burst, nowMs)]),
    ) as Record<CommandBudget, CommandRateBound>;
  }

  take(budget: CommandBudget, nowMs: number, keep = 0): boolean {
    return this.buckets[budget].take(nowMs, keep);
  }

  /** Dropped per budget (health). */
  dropped(): Record<CommandBudget, number> {
    return Object.fromEntries(Object.entries(this.buckets).map(([k, b]) => [k, b.dropped])) as Record<
      CommandBudget,
      number
    >;
  }

  get totalDropped(): number {
    return Object.values(this.buckets).reduce((sum, b) => sum + b.dropped, 0);
  }
}
