/**
 * The simulator's side of the line: a serial device (a pty pair's VMC end), decoded into the
 * events of one protocol, taken one at a time by the VMC script with a deadline.
 */
import { SerialPort } from 'serialport';

/**
 * How long close() lets a write under way come back from the binding before it closes the port.
 * serialport writes on libuv's thread pool: a descriptor closed under a queued write gives EBADF
 * (or, reused meanwhile, bytes in another file). A write that cannot finish (the other end takes
 * nothing) waits on the poller, not on the descriptor, and is cut safely by the close after this.
 */
export const CLOSE_WRITE_GRACE_MS = 1000;

export class Wire<E> {
  private readonly events: E[] = [];
  private waiter: ((e: E | null) => void) | null = null;
  private closed = false;
  /** The write handed to serialport and not yet called back; null when none. */
  private writing: Promise<void> | null = null;

  private constructor(
    private readonly port: SerialPort,
    scan: (bytes: Buffer) => E[],
  ) {
    port.on('data', (chunk: Buffer) => {
      for (const e of scan(chunk)) this.push(e);
    });
    // A write cut by the close fails ('Canceled', 'Port is not open'): expected, and the send has
    // ended with the close. Before the close, a failing port is a line gone: the wire is closed.
    port.on('error', () => {
      if (!this.closed) void this.close();
    });
  }

  static open<E>(path: string, baudRate: number, scan: (bytes: Buffer) => E[]): Promise<Wire<E>> {
    const port = new SerialPort({ path, baudRate, lock: false, autoOpen: false });
    return new Promise((resolve, reject) => port.open((err) => (err ? reject(err) : resolve(new Wire(port, scan)))));
  }

  private push(e: E): void {
    const w = this.waiter;
    if (w) {
      this.waiter = null;
      w(e);
    } else this.events.push(e);
  }

  /** The next event, or null after `timeoutMs` (or when closed). */
  next(timeoutMs: number): Promise<E | null> {
    const e = this.events.shift();
    if (e !== undefined || this.closed) return Promise.resolve(e ?? null);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        resolve(null);
      }, timeoutMs);
      this.waiter = (ev) => {
        clearTimeout(timer);
        resolve(ev);
      };
    });
  }

  /** Waits for an event that `match` accepts, skipping others; null on timeout. */
  async expect(match: (e: E) => boolean, timeoutMs: number): Promise<E | null> {
    for (;;) {
      const e = await this.next(timeoutMs);
      if (e === null || match(e)) return e;
    }
  }

  drop(): void {
    this.events.length = 0;
  }

  async send(bytes: Buffer, delayMs: number): Promise<void> {
    if (delayMs > 0) await sleep(delayMs);
    if (this.closed) return;
    // serialport's drain() on a closed port waits for an 'open' that never comes: a send still
    // under way when the test closes the wire ends with the close instead.
    let written!: () => void;
    const writing = new Promise<void>((r) => (written = r));
    this.writing = writing;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        this.port.off('close', done);
        resolve();
      };
      this.port.once('close', done);
      this.port.write(bytes, (err) => {
        if (this.writing === writing) this.writing = null;
        written();
        if (err || this.closed || !this.port.isOpen) done();
        else this.port.drain(() => done());
      });
    });
  }

  setBaud(rate: number): Promise<void> {
    return new Promise((resolve) => this.port.update({ baudRate: rate }, () => resolve()));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** No write starts after this; one under way comes back first (at most CLOSE_WRITE_GRACE_MS). */
  async close(): Promise<void> {
    this.closed = true;
    this.waiter?.(null);
    this.waiter = null;
    if (this.writing !== null) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.writing, new Promise((r) => (timer = setTimeout(r, CLOSE_WRITE_GRACE_MS)))]);
      clearTimeout(timer);
    }
    if (this.port.isOpen) await new Promise<void>((resolve) => this.port.close(() => resolve()));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
