/**
 * One token bucket for every incoming command: a flood is counted and dropped (not answered, so
 * a flood cannot make the device flood back). Time is an input; no timers.
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

  take(nowMs: number): boolean {
    const elapsed = Math.max(0, nowMs - this.updatedMs);
    this.tokens = Math.min(this.burst, this.tokens + (elapsed / 1000) * this.perSecond);
    this.updatedMs = nowMs;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.dropped += 1;
    return false;
  }
}
