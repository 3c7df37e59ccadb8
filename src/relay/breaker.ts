/**
 * Per-machine bounds at the relay (docs/decisions/fleet-trust.md item 10: 36 sources, each under its own rate limit,
 * aiming Starts at one silent machine filled every in-flight slot of the relay, and Starts for
 * healthy machines got "too many Starts waiting"):
 *
 *   - at most `maxInFlight` Starts wait for one machine at once;
 *   - a machine that leaves `failures` Starts in a row unanswered is "open" for `openMs`: its Starts
 *     are answered Declined 30 at once, without a message to the broker; then one Start probes it
 *     (half-open): an answer closes the breaker, another silence opens it again.
 *
 * Pure bookkeeping: time comes in as an argument (the monotonic clock), no timers here.
 */

export interface MachineBoundsLimits {
  maxInFlight: number;
  failures: number;
  openMs: number;
}

export type MachineAdmit = { admit: true } | { admit: false; reason: 'machine-busy' | 'breaker-open' };

interface MachineState {
  inFlight: number;
  failures: number;
  openUntilMs: number;
  /** A probe is out after the open period; others wait for its outcome. */
  probing: boolean;
}

export class MachineBounds {
  private readonly machines = new Map<string, MachineState>();
  readonly refused = { 'machine-busy': 0, 'breaker-open': 0 };
  /** Times a breaker opened. */
  opened = 0;

  constructor(private readonly limits: MachineBoundsLimits) {}

  admit(machineId: string, nowMs: number): MachineAdmit {
    const m = this.machines.get(machineId) ?? { inFlight: 0, failures: 0, openUntilMs: 0, probing: false };
    let reason: 'machine-busy' | 'breaker-open' | null = null;
    if (m.failures >= this.limits.failures && (nowMs < m.openUntilMs || m.probing)) reason = 'breaker-open';
    else if (m.inFlight >= this.limits.maxInFlight) reason = 'machine-busy';
    if (reason !== null) {
      this.refused[reason] += 1;
      return { admit: false, reason };
    }
    if (m.failures >= this.limits.failures) m.probing = true;
    m.inFlight += 1;
    this.machines.set(machineId, m);
    return { admit: true };
  }

  /**
   * A Start admitted for `machineId` ended: `answered` = the machine said something (any answer or
   * refusal), `silent` = no answer in time, `neutral` = it says nothing about the machine (the
   * broker was away, the relay overloaded).
   */
  release(machineId: string, ended: 'answered' | 'silent' | 'neutral', nowMs: number): void {
    const m = this.machines.get(machineId);
    if (m === undefined) return;
    m.inFlight = Math.max(0, m.inFlight - 1);
    m.probing = false;
    if (ended === 'answered') {
      m.failures = 0;
    } else if (ended === 'silent') {
      m.failures += 1;
      if (m.failures >= this.limits.failures) {
        if (m.openUntilMs <= nowMs) this.opened += 1;
        m.openUntilMs = nowMs + this.limits.openMs;
      }
    }
    if (m.inFlight === 0 && m.failures === 0) this.machines.delete(machineId);
  }

  /** Machines whose breaker is open now (for /healthz). */
  openCount(nowMs: number): number {
    let n = 0;
    for (const m of this.machines.values())
      if (m.failures >= this.limits.failures && (nowMs < m.openUntilMs || m.probing)) n += 1;
    return n;
  }
}
