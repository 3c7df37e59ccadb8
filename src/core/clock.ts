/**
 * Clocks (docs/decisions/hardening.md item 6). Durations (retry windows, backoff delays, payment and session
 * deadlines, polling) are measured on the monotonic clock, which NTP never steps. The wall clock
 * is kept for what the gateway or a person reads (MachineAuTime, log and ledger times) and for
 * due times persisted in the ledger, which are re-based when a step is detected.
 *
 * `wallNow()` is Date.now() unless the environment names a test clock: QRVEND_TEST_CLOCK_OFFSET_FILE
 * holds a number of milliseconds added to the wall clock (re-read at most every 50 ms). Tests step
 * the clock of the real daemon by rewriting that file; nothing else in the system is touched.
 * The variable is for tests only; `qrvend doctor` reports it when set.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export const TEST_CLOCK_ENV = 'QRVEND_TEST_CLOCK_OFFSET_FILE';

const offsetFile = process.env[TEST_CLOCK_ENV] || null;
let offsetMs = 0;
let offsetReadAt = -Infinity;

function testOffset(): number {
  if (offsetFile === null) return 0;
  const now = performance.now();
  if (now - offsetReadAt >= 50) {
    offsetReadAt = now;
    try {
      const value = Number(readFileSync(offsetFile, 'utf8').trim());
      offsetMs = Number.isFinite(value) ? value : 0;
    } catch {
      offsetMs = 0;
    }
  }
  return offsetMs;
}

/** Epoch milliseconds, as the wall clock says (stepped by NTP, a person, or a test). */
export function wallNow(): number {
  return Date.now() + testOffset();
}

/** Milliseconds since an arbitrary origin; never steps. */
export function monotonicNow(): number {
  return performance.now();
}

export interface ClockStep {
  /** How far the wall clock jumped relative to the monotonic clock (negative: backwards). */
  stepMs: number;
  wallMs: number;
}

/**
 * Notices wall-clock steps: between two checks, the wall clock should advance as much as the
 * monotonic one; a difference beyond `thresholdMs` is a step. Checked on demand (no timer inside).
 */
export class ClockStepDetector {
  private baseWall: number;
  private baseMono: number;
  /** Steps seen since start (doctor, stats). */
  steps = 0;
  lastStep: ClockStep | null = null;

  constructor(
    private readonly thresholdMs = 2_000,
    private readonly wall: () => number = wallNow,
    private readonly mono: () => number = monotonicNow,
  ) {
    this.baseWall = wall();
    this.baseMono = mono();
  }

  /** The step since the last check, or null. */
  check(): ClockStep | null {
    const wall = this.wall();
    const mono = this.mono();
    const drift = wall - this.baseWall - (mono - this.baseMono);
    this.baseWall = wall;
    this.baseMono = mono;
    if (Math.abs(drift) < this.thresholdMs) return null;
    this.steps += 1;
    this.lastStep = { stepMs: Math.round(drift), wallMs: wall };
    return this.lastStep;
  }
}
