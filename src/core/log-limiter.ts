/**
 * One log line per interval for a message that can repeat without bound (docs/decisions/hardening.md item 14: a
 * board spewing noise wrote 66 info lines a second of "input refused (out of sequence)"). The
 * first occurrence is logged at once, with its fields; later ones within `intervalMs` are
 * counted, and one summary line with the count (and the last occurrence's fields) is written
 * when the interval ends. The counters that doctor and the stats line read are kept elsewhere:
 * this only bounds the journal.
 */
import { performance } from 'node:perf_hooks';

export interface RepeatedLogOptions {
  intervalMs: number;
  /** Writes one line; `repeated` is the number of occurrences the line stands for beyond the first. */
  write(fields: Record<string, unknown>, repeated: number): void;
  now?: () => number;
}

export class RepeatedLog {
  private windowEndsMs = -Infinity;
  private suppressed = 0;
  private lastFields: Record<string, unknown> = {};
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => number;

  constructor(private readonly options: RepeatedLogOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  add(fields: Record<string, unknown>): void {
    const nowMs = this.now();
    if (nowMs >= this.windowEndsMs) {
      this.flush();
      this.windowEndsMs = nowMs + this.options.intervalMs;
      this.options.write(fields, 0);
      return;
    }
    this.suppressed += 1;
    this.lastFields = fields;
    if (this.timer === null) {
      this.timer = setTimeout(() => this.flush(), Math.max(0, this.windowEndsMs - nowMs));
      this.timer.unref();
    }
  }

  /** Writes the summary of the occurrences counted so far, if any. */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.suppressed === 0) return;
    const count = this.suppressed;
    this.suppressed = 0;
    this.options.write(this.lastFields, count);
  }
}
