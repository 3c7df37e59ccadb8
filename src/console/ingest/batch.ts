/**
 * Collects the messages that arrive while a commit runs, and hands them over as one batch
 * (docs/console.md, "Ingest"): at most `events` messages, or whatever came within `ms` of the
 * first one, whichever is first. One batch is committed at a time; what arrived during a commit
 * goes as the next batch as soon as it ends. When a full batch waits behind
 * a running commit, the reader stops taking packets (its `resume` is held), so the socket, then
 * the broker, hold what comes next: memory stays bounded whatever the fleet sends.
 */

export interface BatchLimits {
  /** Most messages in one batch (one transaction). */
  events: number;
  /** Longest wait, from the first message of a batch, before it is committed anyway. */
  ms: number;
}

/** The ranges a configuration may set, and the defaults (docs/console.md). */
export const BATCH_RANGES = { events: { min: 1, max: 1000 }, ms: { min: 1, max: 1000 } } as const;
export const DEFAULT_BATCH: BatchLimits = { events: 100, ms: 10 };

export class BatchCollector<T> {
  private pending: T[] = [];
  private held: (() => void)[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly limits: BatchLimits,
    /** Commits one batch; must not throw (it answers for its own failures). */
    private readonly commit: (batch: T[]) => Promise<void>,
  ) {}

  /** Takes a message; `resume` lets the reader go on to the next packet (at once unless the batch is full). */
  add(item: T, resume: () => void): void {
    if (this.closed) return resume();
    this.pending.push(item);
    if (this.pending.length >= this.limits.events) {
      if (this.running === null) this.start();
      else return void this.held.push(resume);
    } else if (this.timer === null && this.running === null) {
      this.timer = setTimeout(() => this.start(), this.limits.ms);
    }
    resume();
  }

  private start(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.running !== null || this.pending.length === 0) return;
    const batch = this.pending.splice(0, this.limits.events);
    this.running = this.commit(batch).finally(() => {
      this.running = null;
      const held = this.held.splice(0);
      for (const resume of held) resume();
      // What arrived during the commit has waited long enough: it goes now, up to the limit.
      this.start();
    });
  }

  /** Commits what is pending and waits for it; afterwards new messages are left to the broker. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.running !== null || this.pending.length > 0) {
      if (this.running === null) this.start();
      await this.running;
    }
    if (this.timer !== null) clearTimeout(this.timer);
    for (const resume of this.held.splice(0)) resume();
  }
}
