/**
 * Keeps the link to the board up: opens it, frames its bytes into lines (a fresh framer per
 * open), watches it, and reopens it with exponential backoff when it goes away.
 *
 * A vanished device does not always announce itself: some bindings keep spinning on zero-byte
 * reads and never emit `close`. So the watchdog (no line for mdb.linkWatchdogMs; the board sends
 * r,ACK on every VMC poll) checks whether the device path still exists: gone means unplugged
 * (close and reopen); present means the board or the VMC went quiet (`onSilent`, which lets the
 * machine loop decide: reset the board through its GPIO line and restart the link).
 */
import { existsSync } from 'node:fs';
import { monotonicNow } from '../../core/clock.js';
import type { Logger } from '../../core/log.js';
import { LineFramer } from './line-framer.js';
import type { ByteLink, OpenLink } from './types.js';

export interface LinkSupervisorOptions {
  open: OpenLink;
  /** Device path checked on watchdog expiry; null when there is no device (the in-memory wire). */
  devicePath: string | null;
  maxLineLength: number;
  linkWatchdogMs: number;
  reopenMinMs: number;
  reopenMaxMs: number;
  log: Logger;
  onUp(): void;
  onDown(reason: string): void;
  onLine(line: string): void;
  onOverlong(head: string): void;
  /** The watchdog expired and the device is still there. */
  onSilent(): void;
}

export interface LinkStats {
  up: boolean;
  opens: number;
  reopens: number;
  openFailures: number;
  lastDownReason: string | null;
}

export class LinkSupervisor {
  private link: ByteLink | null = null;
  private stopped = true;
  private reopenTimer: NodeJS.Timeout | null = null;
  private watchdogTimer: NodeJS.Timeout | null = null;
  private lastLineAt = 0;
  private attempt = 0;
  private opening = false;
  private readonly counters: LinkStats = { up: false, opens: 0, reopens: 0, openFailures: 0, lastDownReason: null };

  constructor(private readonly o: LinkSupervisorOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.tryOpen();
  }

  get isUp(): boolean {
    return this.link !== null;
  }

  /** Sends one line (the terminator is added). False when the link is down: the line is dropped. */
  writeLine(line: string): boolean {
    if (this.link === null) return false;
    this.link.write(`${line}\r\n`);
    return true;
  }

  /** Closes the link and opens it again after the backoff (used after a silent link or a board reset). */
  restart(reason: string): void {
    if (this.stopped) return;
    if (this.link !== null) this.goDown(reason, true);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimers();
    const link = this.link;
    this.link = null;
    this.counters.up = false;
    await link?.close();
  }

  stats(): LinkStats {
    return { ...this.counters };
  }

  private async tryOpen(): Promise<void> {
    if (this.stopped || this.opening || this.link !== null) return;
    this.opening = true;
    let link: ByteLink;
    try {
      link = await this.o.open();
    } catch (err) {
      this.opening = false;
      this.counters.openFailures += 1;
      this.o.log.warn({ err: (err as Error).message, attempt: this.attempt }, 'MDB link: open failed, retrying');
      this.scheduleReopen();
      return;
    }
    this.opening = false;
    if (this.stopped) {
      await link.close();
      return;
    }
    this.attach(link);
  }

  private attach(link: ByteLink): void {
    this.link = link;
    this.counters.opens += 1;
    if (this.counters.opens > 1) this.counters.reopens += 1;
    this.counters.up = true;
    const framer = new LineFramer(this.o.maxLineLength, {
      onLine: (line) => {
        this.lastLineAt = monotonicNow();
        this.attempt = 0; // the board talks: the next outage starts the backoff afresh
        this.o.onLine(line);
      },
      onOverlong: (head) => {
        this.lastLineAt = monotonicNow();
        this.o.onOverlong(head);
      },
    });
    link.onData((chunk) => {
      if (this.link === link) framer.push(chunk);
    });
    link.onClose((reason) => {
      if (this.link === link) this.goDown(reason, false);
    });
    this.lastLineAt = monotonicNow();
    this.armWatchdog(this.o.linkWatchdogMs);
    this.o.log.info({ port: link.description }, 'MDB link open');
    this.o.onUp();
  }

  private goDown(reason: string, closeIt: boolean): void {
    const link = this.link;
    this.link = null;
    this.counters.up = false;
    this.counters.lastDownReason = reason;
    this.clearTimers();
    if (closeIt) void link?.close();
    this.o.log.warn({ reason }, 'MDB link down');
    this.o.onDown(reason);
    this.scheduleReopen();
  }

  private scheduleReopen(): void {
    if (this.stopped || this.reopenTimer !== null) return;
    const delay = Math.min(this.o.reopenMaxMs, this.o.reopenMinMs * 2 ** Math.min(this.attempt, 20));
    this.attempt += 1;
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = null;
      void this.tryOpen();
    }, delay);
  }

  private armWatchdog(ms: number): void {
    if (this.watchdogTimer !== null) clearTimeout(this.watchdogTimer);
    const due = monotonicNow() + ms;
    this.watchdogTimer = setTimeout(() => this.onWatchdog(monotonicNow() - due), ms);
  }

  // Re-arming a timer per line would cost more than the lines; instead the timer checks the last
  // line's time when it fires and sleeps again for what is left. Monotonic: a wall clock stepped
  // back 10 h would otherwise put the next check 10 h away (docs/decisions/hardening.md item 6).
  private onWatchdog(lateByMs: number): void {
    this.watchdogTimer = null;
    if (this.link === null) return;
    const quietFor = monotonicNow() - this.lastLineAt;
    if (quietFor < this.o.linkWatchdogMs) {
      this.armWatchdog(this.o.linkWatchdogMs - quietFor);
      return;
    }
    // A timer that fires late means this process was stalled (CPU starved, swapped): the board's
    // lines may be sitting unread in the kernel. Timers run before I/O in the event loop, so give
    // the pending input a short grace period to be read before calling the link silent.
    const grace = Math.min(250, Math.ceil(this.o.linkWatchdogMs / 4));
    if (lateByMs > grace) {
      this.armWatchdog(grace);
      return;
    }
    if (this.o.devicePath !== null && !existsSync(this.o.devicePath)) {
      this.goDown(`device ${this.o.devicePath} vanished`, true);
      return;
    }
    this.armWatchdog(this.o.linkWatchdogMs);
    this.o.onSilent();
  }

  private clearTimers(): void {
    if (this.watchdogTimer !== null) clearTimeout(this.watchdogTimer);
    if (this.reopenTimer !== null) clearTimeout(this.reopenTimer);
    this.watchdogTimer = null;
    this.reopenTimer = null;
  }
}
