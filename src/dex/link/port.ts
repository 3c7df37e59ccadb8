/**
 * The DEX jack's serial port, opened for one read and closed after it (EVA-DTS 7.3.2: a data
 * carrier left connected must release its transmit line). serialport on the main thread; its
 * exclusive lock (flock on the device) keeps a second process, such as `qrvend dex read` next to the
 * daemon, off the port.
 */
import { SerialPort } from 'serialport';
import { ErrorCodes, QrvendError } from '../../core/errors.js';

export interface DexPort {
  write(bytes: Buffer): Promise<void>;
  setBaud(rate: number): Promise<void>;
  onData(handler: (chunk: Buffer) => void): void;
  /** The device vanished or failed: the read cannot go on. */
  onLost(handler: (reason: string) => void): void;
  close(): Promise<void>;
}

export function openDexPort(path: string, baudRate: number): Promise<DexPort> {
  const port = new SerialPort({
    path,
    baudRate,
    dataBits: 8,
    parity: 'none',
    stopBits: 1,
    lock: true,
    autoOpen: false,
  });
  return new Promise((resolve, reject) => {
    port.open((err) => {
      if (err) return reject(portError(path, err));
      let lost: (reason: string) => void = () => {};
      let closing = false;
      port.on('close', () => {
        if (!closing) lost('the port closed (adapter unplugged?)');
      });
      port.on('error', (e: Error) => lost(`port error: ${e.message}`));
      resolve({
        write: (bytes) =>
          new Promise((res, rej) => {
            // drain() on a port that closed meanwhile would wait for an 'open' that never comes.
            port.write(bytes, (e) => {
              if (e) return rej(portError(path, e));
              if (!port.isOpen) return rej(portError(path, new Error('the port closed while writing')));
              port.drain((de) => (de ? rej(portError(path, de)) : res()));
            });
          }),
        setBaud: (rate) =>
          new Promise((res, rej) => port.update({ baudRate: rate }, (e) => (e ? rej(portError(path, e)) : res()))),
        onData: (handler) => port.on('data', handler),
        onLost: (handler) => {
          lost = handler;
        },
        close: () =>
          new Promise((res) => {
            closing = true;
            if (!port.isOpen) return res();
            // A port whose device vanished can fail to close; it is released either way.
            port.close(() => res());
          }),
      });
    });
  });
}

function portError(path: string, err: Error): QrvendError {
  const locked = /lock|busy|temporarily unavailable/i.test(err.message);
  return new QrvendError(ErrorCodes.DEX_PORT, `cannot use the DEX port ${path}: ${err.message}`, {
    hint: locked
      ? 'another process holds the port (the qrvend daemon reading on ' +
        'schedule, or a terminal program): wait for it or stop it'
      : 'check that the USB-RS232 adapter is plugged in, that dex.port ' +
        'names it, and that the qrvend user is in the dialout group',
    details: { path },
    cause: err,
  });
}
