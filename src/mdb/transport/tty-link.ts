/**
 * A ByteLink over a serial device (a real port or a pty path) whose bytes are read and written on
 * the event loop, for the daemon's hot path.
 *
 * Why not serialport's stream: its Linux binding reads with fs.read on the libuv thread pool (a
 * pool round trip per chunk, plus one more read that returns EAGAIN before it polls again) and
 * writes the same way, so every MDB line costs cross-thread wake-ups on the main thread and a
 * pool thread competing for a CPU (BENCHMARKS.md). Here serialport's binding still opens and
 * configures the device (baud rate, 8N1, raw termios, the exclusive lock, hang-up on close), and
 * keeps that descriptor open for the life of the link so the lock and the settings stay; the
 * bytes go through a second descriptor of the same device driven by a libuv tty handle: one
 * non-blocking read per readable event and a direct write, both on the event loop.
 *
 * Linux only (the product's platform); createMdbTransport() uses serialport elsewhere.
 */
import { closeSync, constants, openSync } from 'node:fs';
import tty from 'node:tty';
import { SerialPort } from 'serialport';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import type { ByteLink, OpenLink } from './types.js';

export interface TtyLinkOptions {
  path: string;
  baudRate: number;
}

/** The part of serialport's port binding used here (the Linux binding exposes its fd). */
interface ConfiguredPort {
  fd?: number | null;
  drain(): Promise<void>;
  close(): Promise<void>;
}

/** A bounded wait: a dead or flow-controlled device must not hold a close up. */
const DRAIN_WAIT_MS = 500;

class TtyLink implements ByteLink {
  private dataHandler: (chunk: Buffer) => void = () => {};
  private closeHandler: (reason: string) => void = () => {};
  private ended = false;
  private closing: Promise<void> | null = null;

  constructor(
    readonly description: string,
    private readonly stream: tty.ReadStream,
    private readonly configured: ConfiguredPort,
  ) {
    stream.on('data', (chunk: Buffer) => this.dataHandler(chunk));
    // A pty whose other side closed reads EIO, which libuv reports as end of file; a vanished USB
    // device does the same or errors. Either way the link is over and must be reopened.
    stream.on('end', () => this.end('closed by the device'));
    stream.on('error', (err: Error) => this.end(`error: ${err.message}`));
  }

  write(data: string | Buffer): void {
    if (this.ended) return;
    this.stream.write(data, (err) => {
      if (err) this.end(`write failed: ${err.message}`);
    });
  }

  onData(handler: (chunk: Buffer) => void): void {
    this.dataHandler = handler;
  }

  onClose(handler: (reason: string) => void): void {
    this.closeHandler = handler;
  }

  async drain(): Promise<void> {
    if (this.ended) return;
    await bounded(this.flushed());
    // tcdrain on the configuring descriptor: the bytes have left the UART, not just our buffer.
    if (!this.ended) await bounded(this.configured.drain().catch(() => {}));
  }

  close(): Promise<void> {
    if (this.closing === null) {
      const wasOpen = !this.ended;
      this.ended = true;
      this.closing = (async () => {
        // Lets the last command (C,0 at shutdown) reach the board.
        if (wasOpen) await bounded(this.flushed());
        await this.release();
      })();
    }
    return this.closing;
  }

  private flushed(): Promise<void> {
    if (this.stream.writableLength === 0) return Promise.resolve();
    return new Promise((resolve) => this.stream.once('drain', resolve));
  }

  private end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.closing = this.release();
    this.closeHandler(reason);
  }

  /** The stream's descriptor first (it closes with the handle), then the configuring one. */
  private async release(): Promise<void> {
    await new Promise<void>((resolve) => {
      if (this.stream.closed) return resolve();
      this.stream.once('close', () => resolve());
      this.stream.destroy();
    });
    // A device that vanished can fail to close; it is gone either way.
    await this.configured.close().catch(() => {});
  }
}

function bounded(p: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, DRAIN_WAIT_MS);
    void p.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function openFailed(path: string, baudRate: number, err: unknown): QrvendError {
  return new QrvendError(
    ErrorCodes.SERIAL_OPEN_FAILED,
    `cannot open the MDB adapter port ${path}: ${(err as Error).message}`,
    {
      hint:
        'check that the board is plugged in, that mdb.port names ' +
        'it, and that the qrvend user is in the dialout group',
      details: { path, baudRate },
      cause: err,
    },
  );
}

export async function openTtyLink(options: TtyLinkOptions): Promise<ByteLink> {
  const { path, baudRate } = options;
  let configured: ConfiguredPort;
  try {
    configured = (await SerialPort.binding.open({
      path,
      baudRate,
      dataBits: 8,
      parity: 'none',
      stopBits: 1,
    })) as ConfiguredPort;
  } catch (err) {
    throw openFailed(path, baudRate, err);
  }
  let fd = -1;
  try {
    fd = openSync(path, constants.O_RDWR | constants.O_NOCTTY | constants.O_NONBLOCK);
    if (!tty.isatty(fd)) throw new Error('not a terminal device');
    // The handle owns fd from here on: destroying the stream closes it.
    return new TtyLink(path, new tty.ReadStream(fd), configured);
  } catch (err) {
    if (fd >= 0) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
    await configured.close().catch(() => {});
    throw openFailed(path, baudRate, err);
  }
}

export function ttyOpener(options: TtyLinkOptions): OpenLink {
  return () => openTtyLink(options);
}
