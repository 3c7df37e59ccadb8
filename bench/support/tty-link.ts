/**
 * The VMC simulator's end of the pty as a ByteLink read on the event loop (tty streams over a
 * non-blocking fd) rather than through serialport, whose Linux binding reads with fs.read on the
 * libuv thread pool (a pool round trip per chunk, plus one that returns EAGAIN). The measuring side
 * should cost as little as possible: its own latency is part of every vend figure.
 * The pty is already raw (the pty relay sets it up raw, no echo), so no termios work is needed here.
 */
import { closeSync, constants, openSync } from 'node:fs';
import tty from 'node:tty';
import type { ByteLink } from '../../src/mdb/transport/index.js';

export function openTtyLink(path: string): ByteLink {
  const fd = openSync(path, constants.O_RDWR | constants.O_NOCTTY | constants.O_NONBLOCK);
  const input = new tty.ReadStream(fd);
  const output = new tty.WriteStream(fd);
  let onData: (chunk: Buffer) => void = () => {};
  let onClose: (reason: string) => void = () => {};
  let ended = false;
  const end = (reason: string | null) => {
    if (ended) return;
    ended = true;
    input.destroy();
    output.destroy();
    try {
      closeSync(fd);
    } catch {
      // the streams may have closed it already
    }
    if (reason !== null) onClose(reason);
  };
  input.on('data', (chunk: Buffer) => onData(chunk));
  input.on('error', (err) => end(`error: ${err.message}`));
  input.on('end', () => end('the other end closed'));
  output.on('error', (err) => end(`error: ${err.message}`));
  return {
    description: path,
    write: (data) => {
      if (!ended) output.write(data);
    },
    onData: (handler) => (onData = handler),
    onClose: (handler) => (onClose = handler),
    drain: () =>
      new Promise<void>((resolve) => {
        if (ended || output.writableLength === 0) return resolve();
        const timer = setTimeout(resolve, 1000);
        output.once('drain', () => {
          clearTimeout(timer);
          resolve();
        });
      }),
    close: async () => end(null),
  };
}
