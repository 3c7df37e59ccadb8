/**
 * Keep only the newest pending item: screens arrive faster than they can be drawn (a burst of
 * state changes), and only the last one matters. The scheduler is injected so tests can drive it.
 */
export class LatestOnly<T> {
  private pending: { value: T } | null = null;
  private scheduled = false;

  constructor(
    private readonly handle: (value: T) => void,
    private readonly schedule: (run: () => void) => void = (run) => setImmediate(run),
  ) {}

  push(value: T): void {
    this.pending = { value };
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => this.run());
  }

  /** Drop whatever is pending (shutdown). */
  clear(): void {
    this.pending = null;
  }

  private run(): void {
    this.scheduled = false;
    const next = this.pending;
    this.pending = null;
    if (next !== null) this.handle(next.value);
  }
}
