/**
 * Writes the VMC facts (src/mdb/vmc-watch.ts) to the doctor's file (src/mdb/facts-file.ts) when
 * they changed. On the timer the write runs on libuv's thread pool (the machine loop never waits
 * for an fsync); at stop it is written at once, the vend loop being over. One write at a time:
 * facts that change meanwhile go at the next tick.
 */
import type { Logger } from '../core/log.js';
import { writeFileAtomic, writeFileAtomicAsync } from '../core/durable-file.js';
import type { VmcWatch } from './vmc-watch.js';

/** How often the VMC facts are looked at for the doctor's file (written only when they changed). */
export const FACTS_WRITE_INTERVAL_MS = 2_000;

export class VmcFactsWriter {
  private timer: NodeJS.Timeout | null = null;
  private failed = false;
  /** The write on the thread pool, while one runs. */
  private writing: Promise<unknown> | null = null;

  constructor(
    private readonly path: string,
    private readonly watch: VmcWatch,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.write(), FACTS_WRITE_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops the timer, lets a write in progress end, and writes what changed since, at once. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.writing;
    this.write(true);
  }

  private write(atStop = false): void {
    if (this.writing !== null) return;
    this.watch.markTick();
    const facts = this.watch.takeChanged();
    if (facts === null) return;
    const text = `${JSON.stringify(facts, null, 2)}\n`;
    if (atStop) {
      try {
        writeFileAtomic(this.path, text, 0o644);
        this.failed = false;
      } catch (err) {
        this.fail(err);
      }
      return;
    }
    this.writing = writeFileAtomicAsync(this.path, text, 0o644)
      .then(
        () => (this.failed = false),
        (err: unknown) => this.fail(err),
      )
      .finally(() => (this.writing = null));
  }

  private fail(err: unknown): void {
    const fields = { err: (err as Error).message, path: this.path };
    if (!this.failed) this.log.warn(fields, 'MDB: could not write the VMC facts for qrvend doctor');
    this.failed = true;
  }
}
