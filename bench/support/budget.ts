/**
 * A time budget: each benchmark stops taking samples when its budget is spent (the whole run stays under 10 minutes).
 */
import { performance } from 'node:perf_hooks';

export class Budget {
  private readonly endsAt: number;

  constructor(readonly ms: number) {
    this.endsAt = performance.now() + ms;
  }

  get leftMs(): number {
    return Math.max(0, this.endsAt - performance.now());
  }

  get spent(): boolean {
    return performance.now() >= this.endsAt;
  }

  /** A smaller budget carved from this one (never past its end). */
  slice(ms: number): Budget {
    return new Budget(Math.min(ms, this.leftMs));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` every `everyMs` until it returns true or `timeoutMs` passes; returns whether it did. */
export async function waitFor(check: () => boolean, timeoutMs: number, everyMs = 10): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    if (check()) return true;
    if (performance.now() >= until) return false;
    await sleep(everyMs);
  }
}
