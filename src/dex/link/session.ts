/**
 * Runs one protocol machine over an open port: feeds it the bytes and its timer, carries out its
 * effects, resolves with the file or rejects with a QrvendError. The work per received chunk is
 * one step of the machine, so a read never holds up the MDB loop sharing the main thread.
 */
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { LinkEffect, LinkInput, LinkMachine } from './machine.js';
import type { DexPort } from './port.js';

/** How long the last queued bytes may take to go out once the read has ended. */
const FLUSH_WAIT_MS = 1000;

/**
 * A bound on the whole read, whatever the VMC does: the protocols' own timers are re-armed by
 * every answer, so a VMC repeating itself forever would otherwise hold the port forever. A minute
 * plus the largest file at 100 bytes a second (DDCMP at 2400 baud with its acknowledgements).
 */
export function readDeadlineMs(maxFileBytes: number): number {
  return 60_000 + Math.ceil(maxFileBytes / 100) * 1000;
}

export function runSession<S>(
  machine: LinkMachine<S>,
  port: DexPort,
  maxFileBytes: number,
  log: Logger,
  now: Date = new Date(),
  deadlineMs = readDeadlineMs(maxFileBytes),
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    new LinkSession(machine, port, log, maxFileBytes, deadlineMs, resolve, reject).start(now);
  });
}

/** One read under way: the machine's state and timer, the bytes queued for the port, and its end. */
class LinkSession<S> {
  private state: S;
  private timer: NodeJS.Timeout | undefined;
  private readonly deadline: NodeJS.Timeout;
  private writes: Promise<void> = Promise.resolve();
  private ended = false;

  constructor(
    private readonly machine: LinkMachine<S>,
    private readonly port: DexPort,
    private readonly log: Logger,
    maxFileBytes: number,
    deadlineMs: number,
    private readonly resolve: (file: Buffer) => void,
    private readonly reject: (err: QrvendError) => void,
  ) {
    this.state = machine.initial(maxFileBytes);
    this.deadline = setTimeout(() => this.finish(deadlineExceeded(deadlineMs)), deadlineMs);
  }

  start(now: Date): void {
    this.port.onData((chunk) => this.feed({ kind: 'bytes', bytes: chunk }));
    this.port.onLost((reason) => this.finish(portLost(reason)));
    this.feed({ kind: 'begin', now });
  }

  private finish(err: QrvendError | null, file?: Buffer): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    clearTimeout(this.deadline);
    // Whatever was queued (an EOT, a last ACK) goes out before the caller closes the port;
    // a device that stopped taking bytes must not hold the result up.
    let wait: NodeJS.Timeout | undefined;
    const flushed = Promise.race([
      this.writes.finally(() => clearTimeout(wait)),
      new Promise<void>((r) => (wait = setTimeout(r, FLUSH_WAIT_MS))),
    ]);
    void flushed.then(
      () => (err ? this.reject(err) : this.resolve(file!)),
      (e: unknown) => this.reject(err ?? (e instanceof QrvendError ? e : portLost(String(e)))),
    );
  }

  /** Queues a port operation behind the ones before it; a failure ends the read. */
  private queue(work: () => Promise<void>): void {
    this.writes = this.writes.then(work);
    this.writes.catch((e: unknown) => this.finish(e instanceof QrvendError ? e : portLost(String(e))));
  }

  private apply(effect: LinkEffect): void {
    switch (effect.kind) {
      case 'send':
        this.queue(async () => {
          if (effect.delayMs > 0) await new Promise((r) => setTimeout(r, effect.delayMs));
          await this.port.write(effect.bytes);
        });
        break;
      case 'baud':
        this.queue(() => this.port.setBaud(effect.rate));
        this.log.debug({ baud: effect.rate }, 'dex: baud rate changed');
        break;
      case 'timer':
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.feed({ kind: 'timeout' }), effect.ms);
        break;
      case 'done':
        this.finish(null, effect.file);
        break;
      case 'fail':
        this.finish(new QrvendError(ErrorCodes[effect.code], effect.message, { hint: effect.hint }));
        break;
    }
  }

  private feed(input: LinkInput): void {
    if (this.ended) return;
    const step = this.machine.step(this.state, input);
    this.state = step.state;
    for (const effect of step.effects) this.apply(effect);
  }
}

function deadlineExceeded(deadlineMs: number): QrvendError {
  return new QrvendError(
    ErrorCodes.DEX_TIMEOUT,
    `the DEX read did not end within ${Math.round(deadlineMs / 1000)}` +
      ` s (the VMC kept the session going without finishing it)`,
    {
      hint: 'power-cycle the VMC if it keeps doing this; check that dex.maxFileBytes is not far larger than its files',
    },
  );
}

function portLost(reason: string): QrvendError {
  return new QrvendError(ErrorCodes.DEX_PORT, `the DEX port failed during a read: ${reason}`, {
    hint: 'check the USB-RS232 adapter and its cable, then read again',
  });
}
