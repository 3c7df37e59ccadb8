/**
 * Named steps with a deadline each, timed on the monotonic clock, and the teardown list: whatever
 * the run started (qemu, simulators, the ssh master) is stopped in reverse order however it ends.
 */
import { performance } from 'node:perf_hooks';

export interface StepRecord {
  name: string;
  seconds: number;
  ok: boolean;
  error?: string;
}

export class Steps {
  readonly records: StepRecord[] = [];
  private readonly cleanups: { what: string; fn: () => Promise<void> | void }[] = [];

  constructor(private readonly print: (line: string) => void) {}

  async run<T>(name: string, deadlineMs: number, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    this.print(`[field] ${name} ...`);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`step "${name}" passed its deadline of ${Math.round(deadlineMs / 1000)} s`)),
        deadlineMs,
      );
    });
    try {
      const value = await Promise.race([fn(), deadline]);
      const seconds = round1((performance.now() - t0) / 1000);
      this.records.push({ name, seconds, ok: true });
      this.print(`[field] ${name}: ok (${seconds} s)`);
      return value;
    } catch (err) {
      const seconds = round1((performance.now() - t0) / 1000);
      const error = (err as Error).message;
      this.records.push({ name, seconds, ok: false, error });
      this.print(`[field] ${name}: FAILED after ${seconds} s: ${error}`);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Registers a teardown; runs last-in first-out in teardown(). */
  onTeardown(what: string, fn: () => Promise<void> | void): void {
    this.cleanups.push({ what, fn });
  }

  async teardown(): Promise<void> {
    while (this.cleanups.length > 0) {
      const { what, fn } = this.cleanups.pop()!;
      try {
        await Promise.race([Promise.resolve(fn()), new Promise((r) => setTimeout(r, 15_000))]);
      } catch (err) {
        this.print(`[field] teardown of ${what} failed: ${(err as Error).message}`);
      }
    }
  }
}

export function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
