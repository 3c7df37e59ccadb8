/**
 * A ByteLink over serialport: a real device (`/dev/serial0`, `/dev/ttyACM0`), a pseudo-terminal
 * path (a pty is just another device path), or serialport's MockBinding in unit tests.
 *
 * Main thread only: serialport's native binding is not safe inside worker_threads.
 */
import { SerialPort, SerialPortMock } from 'serialport';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import type { ByteLink, OpenLink } from './types.js';

type AnyPort = SerialPort | SerialPortMock;

export interface SerialLinkOptions {
  path: string;
  baudRate: number;
  /**
   * Use serialport's MockBinding (unit tests); create the port first with `SerialPortMock.binding.createPort(path)`.
   */
  mock?: boolean;
}

class SerialLink implements ByteLink {
  readonly description: string;
  private dataHandler: (chunk: Buffer) => void = () => {};
  private closeHandler: (reason: string) => void = () => {};
  private ended = false;

  constructor(readonly port: AnyPort) {
    this.description = port.path;
    port.on('data', (chunk: Buffer) => this.dataHandler(chunk));
    // A vanished USB device or a pty whose other end went away surfaces as 'close' (with
    // err.disconnected) or as an 'error'; either way the link is over and must be reopened.
    port.on('close', (err: (Error & { disconnected?: boolean }) | null) =>
      this.end(err ? `closed: ${err.message}` : 'closed by the device'),
    );
    port.on('error', (err: Error) => this.end(`error: ${err.message}`));
  }

  write(data: string | Buffer): void {
    if (this.ended) return;
    this.port.write(data, (err) => {
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
    if (!this.ended) await drain(this.port);
  }

  async close(): Promise<void> {
    if (!this.ended) await drain(this.port);
    this.ended = true;
    await closePort(this.port);
  }

  private end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    void closePort(this.port);
    this.closeHandler(reason);
  }
}

/** Lets the last command (C,0 at shutdown) reach the board; a dead port must not hold us up. */
function drain(port: AnyPort): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 500);
    port.drain(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function closePort(port: AnyPort): Promise<void> {
  return new Promise((resolve) => {
    if (!port.isOpen) return resolve();
    // A port whose device vanished can fail to close; it is gone either way.
    port.close(() => resolve());
  });
}

export function openSerialLink(options: SerialLinkOptions): Promise<ByteLink> {
  const { path, baudRate } = options;
  const port: AnyPort = options.mock
    ? new SerialPortMock({ path, baudRate, autoOpen: false })
    : new SerialPort({ path, baudRate, autoOpen: false, dataBits: 8, parity: 'none', stopBits: 1 });
  return new Promise((resolve, reject) => {
    port.open((err) => {
      if (err) {
        reject(
          new QrvendError(ErrorCodes.SERIAL_OPEN_FAILED, `cannot open the MDB adapter port ${path}: ${err.message}`, {
            hint:
              'check that the board is plugged in, that mdb.port names ' +
              'it, and that the qrvend user is in the dialout group',
            details: { path, baudRate },
            cause: err,
          }),
        );
        return;
      }
      resolve(new SerialLink(port));
    });
  });
}

export function serialOpener(options: SerialLinkOptions): OpenLink {
  return () => openSerialLink(options);
}
