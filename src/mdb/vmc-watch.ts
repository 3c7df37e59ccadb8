/**
 * What the VMC actually does, counted against what its profile promised (docs/decisions/real-vending-machines.md items
 * 4 and 5),
 * for `qrvend doctor` and the VMC_RESET_LOOP alarm. The machine loop feeds it every transition;
 * it never touches the reader itself, it only says when the reader should be held off the bus.
 *
 * Nothing here runs on the vend path: it looks at a transition after its effects were run.
 */
import type { BoardLine } from './codec/types.js';
import type { ReaderConfig, ReaderEffect, ReaderState } from './reader/types.js';

/** A VMC that resets the reader this many times within the window is in a loop (defaults of mdb.resetLoop). */
export const RESET_LOOP_COUNT = 3;
export const RESET_LOOP_WINDOW_MS = 10 * 60_000;
/** The reader is held disabled this long after a loop is seen, doubling on each further loop. */
export const RESET_BACKOFF_MIN_MS = 30_000;
export const RESET_BACKOFF_MAX_MS = 15 * 60_000;
/** Enabled this long without a single POLL: the VMC does not talk to this address. */
export const NEVER_POLLS_AFTER_MS = 30_000;

export interface VmcFacts {
  profile: string;
  level: number;
  profileOverrides: string[];
  device: string;
  address: string;
  /** r,ACK lines (the VMC's POLLs as the board reports them) since the last configuration. */
  polls: number;
  /** VMC resets (reader back to INACTIVE after it was set up), in total and within the window. */
  resets: number;
  resetsInWindow: number;
  /** Vend requests without a session while the profile has no always-idle. */
  vendsOutsideSession: number;
  /** Virtual-credit sessions the VMC ended while nobody used them. */
  idleSessionsDropped: number;
  configRefused: { key: string; value: string; answer: string; at: string } | null;
  resetLoop: { backoffMs: number; heldUntil: string } | null;
  /** What the VMC did that contradicts the profile, in words for a technician. */
  contradictions: string[];
  updatedAt: string;
}

export interface WatchOptions {
  profile: string;
  level: number;
  profileOverrides: string[];
  device: string;
  address: string;
  cfg: ReaderConfig;
  /** mdb.resetLoop: this many resets within windowMs are a loop. Default RESET_LOOP_COUNT / RESET_LOOP_WINDOW_MS. */
  resetLoop?: { count: number; windowMs: number };
  /** Monotonic ms. */
  now(): number;
  wallNow?(): Date;
}

export class VmcWatch {
  private polls = 0;
  private resets: number[] = [];
  private resetsTotal = 0;
  private vendsOutsideSession = 0;
  private idleSessionsDropped = 0;
  private configuredAt: number | null = null;
  private configRefused: VmcFacts['configRefused'] = null;
  private backoffMs = 0;
  private heldUntil: number | null = null;
  private changed = true;
  private neverPollsSeen = false;

  private readonly loopCount: number;
  private readonly loopWindowMs: number;

  constructor(private readonly o: WatchOptions) {
    this.loopCount = o.resetLoop?.count ?? RESET_LOOP_COUNT;
    this.loopWindowMs = o.resetLoop?.windowMs ?? RESET_LOOP_WINDOW_MS;
  }

  poll(): void {
    this.polls += 1;
    if (this.polls === 1) this.changed = true;
  }

  /** One transition: the state before, the line that caused it (if any), the state after, its effects. */
  observe(before: ReaderState, line: BoardLine | null, after: ReaderState, effects: readonly ReaderEffect[]): void {
    for (const e of effects) {
      if (e.kind === 'config.done') {
        // A VMC that never polls leaves the board silent, so the link watchdog restarts the link and
        // the board is configured again and again: the clock runs from the first configuration.
        if (this.configuredAt === null || this.polls > 0) {
          this.configuredAt = this.o.now();
          this.polls = 0;
          this.neverPollsSeen = false;
        }
        this.configRefused = null;
        this.changed = true;
      } else if (e.kind === 'config.refused') {
        this.configRefused = { key: e.key, value: e.value, answer: e.answer, at: this.wall() };
        this.changed = true;
      }
    }
    if (line === null) return;
    if (
      line.kind === 'status' &&
      line.status === 'INACTIVE' &&
      before.kind !== 'Offline' &&
      before.kind !== 'Inactive'
    ) {
      const now = this.o.now();
      this.resets = [...this.resets.filter((t) => now - t < this.loopWindowMs), now];
      this.resetsTotal += 1;
      this.changed = true;
    }
    if (line.kind === 'vend-request' && before.kind === 'Enabled' && !this.o.cfg.alwaysIdle) {
      this.vendsOutsideSession += 1;
      this.changed = true;
    }
    if (
      line.kind === 'status' &&
      line.status === 'ENABLED' &&
      before.kind === 'SessionIdle' &&
      before.session.txId === null &&
      after.kind !== 'SessionIdle'
    ) {
      this.idleSessionsDropped += 1;
      this.changed = true;
    }
  }

  /**
   * Whether a reset loop calls for holding the reader off the bus now: returns the hold's length
   * (the caller holds, then releases), or null. The backoff doubles while the loop goes on.
   */
  resetLoopHold(): number | null {
    const now = this.o.now();
    if (this.heldUntil !== null && now < this.heldUntil) return null;
    this.resets = this.resets.filter((t) => now - t < this.loopWindowMs);
    if (this.resets.length < this.loopCount) {
      // A quiet window after the last hold: the loop is over and the next one starts short again.
      if (this.heldUntil !== null && this.resets.length === 0 && now - this.heldUntil > this.loopWindowMs) {
        this.heldUntil = null;
        this.backoffMs = 0;
        this.changed = true;
      }
      return null;
    }
    this.backoffMs = this.backoffMs === 0 ? RESET_BACKOFF_MIN_MS : Math.min(RESET_BACKOFF_MAX_MS, this.backoffMs * 2);
    this.heldUntil = now + this.backoffMs;
    this.resets = []; // the next loop must be seen afresh after the hold
    this.changed = true;
    return this.backoffMs;
  }

  get inResetLoop(): boolean {
    return this.heldUntil !== null;
  }

  /** The advice that goes with VMC_RESET_LOOP. */
  resetLoopAdvice(): string {
    const other = this.o.cfg.alwaysIdle
      ? 'a session profile (mdb.profile "level2-session" with mdb.virtualCredit)'
      : 'mdb.profile "level1-session"';
    return (
      `the VMC reset the reader ${this.resetsTotal} times (${this.loopCount} within ` +
      `${Math.round(this.loopWindowMs / 1000)} s) right after setting it up; the reader is ` +
      `held off the bus for ${Math.round(this.backoffMs / 1000)} s. Try ${other}, a lower ` +
      `MDB level in the VMC's menu for this cashless device, or mdb.alwaysIdle false`
    );
  }

  /** Returns the facts when they changed since the last call (for the doctor's file), else null. */
  takeChanged(): VmcFacts | null {
    if (!this.changed) return null;
    this.changed = false;
    return this.facts();
  }

  facts(): VmcFacts {
    const now = this.o.now();
    const contradictions: string[] = [];
    if (this.configuredAt !== null && this.polls === 0 && now - this.configuredAt >= NEVER_POLLS_AFTER_MS) {
      contradictions.push(
        `the VMC never polled cashless ${this.o.device === 'cashless2' ? '#2' : '#1'} (${this.o.address}) ` +
          `since the board was configured: enable this cashless device in the VMC's menu, check the cable`,
      );
    }
    if (this.resetsTotal > 0)
      contradictions.push(`the VMC reset the reader ${this.resetsTotal} time(s) after setting it up`);
    if (this.vendsOutsideSession > 0)
      contradictions.push(
        `the VMC asked for ${this.vendsOutsideSession} vend(s) outside a session ` +
          `while the profile has no always-idle: try mdb.profile "level3-always-idle"`,
      );
    if (this.idleSessionsDropped > 0)
      contradictions.push(`the VMC ended ${this.idleSessionsDropped} unused session(s): lower mdb.sessionRefreshMs`);
    return {
      profile: this.o.profile,
      level: this.o.level,
      profileOverrides: this.o.profileOverrides,
      device: this.o.device,
      address: this.o.address,
      polls: this.polls,
      resets: this.resetsTotal,
      resetsInWindow: this.resets.length,
      vendsOutsideSession: this.vendsOutsideSession,
      idleSessionsDropped: this.idleSessionsDropped,
      configRefused: this.configRefused,
      resetLoop:
        this.heldUntil === null
          ? null
          : { backoffMs: this.backoffMs, heldUntil: new Date(this.wallMs() + (this.heldUntil - now)).toISOString() },
      contradictions,
      updatedAt: this.wall(),
    };
  }

  /** The never-polls fact appears with time alone: the caller checks it on a slow tick. */
  markTick(): void {
    if (this.neverPollsSeen || this.configuredAt === null || this.polls > 0) return;
    if (this.o.now() - this.configuredAt < NEVER_POLLS_AFTER_MS) return;
    this.neverPollsSeen = true;
    this.changed = true;
  }

  private wallMs(): number {
    return (this.o.wallNow?.() ?? new Date()).getTime();
  }

  private wall(): string {
    return new Date(this.wallMs()).toISOString();
  }
}
