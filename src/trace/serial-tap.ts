/**
 * The serial tap behind `qrvend-serial-trace`: a pseudo-terminal for the agent (its mdb.port
 * during the trace) joined to the real board's device, every chunk recorded in both directions.
 * The pty comes from the project's relay (src/sim/pty-pair.ts); this process sits on the relay's
 * other end and on the device, both opened with serialport, so no outside tool (socat) is needed
 * and no string from a config or a command line is ever interpreted: the device path is checked
 * against a strict pattern and only ever handed to open(2).
 */
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { openSerialLink } from '../mdb/transport/index.js';
import { startPtyRelay } from '../pty/relay.js';
import { formatChunk } from './format.js';

/** Device paths the trace accepts: under /dev, plain characters, no `..` component. */
export const DEVICE_PATH = /^\/dev\/[A-Za-z0-9/_.-]+$/;

export function checkDevicePath(path: string): string {
  if (!DEVICE_PATH.test(path) || path.split('/').includes('..')) {
    throw new QrvendError(
      ErrorCodes.CLI_USAGE,
      `refusing the serial device path ${JSON.stringify(path)}: it ` +
        `must match ${DEVICE_PATH.source} with no ".." component`,
      {
        hint: 'name the board by its /dev path, e.g. /dev/ttyUSB0 or /dev/serial0',
      },
    );
  }
  return path;
}

export interface SerialTapOptions {
  device: string;
  baudRate: number;
  /** Where the agent's end of the pty appears (a symlink to /dev/pts/N). */
  link: string;
  /** The trace file, appended to; created 0600, never through a symlink. */
  out: string;
  /** Called once everything is open and the agent may start. */
  onReady?: () => void;
}

/** Runs until `stop` is aborted, the device goes away or the relay ends; resolves with why. */
export async function runSerialTap(opts: SerialTapOptions, stop: AbortSignal): Promise<string> {
  const device = checkDevicePath(opts.device);
  const fd = openTrace(opts.out);
  const cleanups: Array<() => Promise<void> | void> = [() => closeSync(fd)];
  const cleanup = async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  };
  try {
    const tapPath = `${opts.link}.tap`;
    const board = await openSerialLink({ path: device, baudRate: opts.baudRate });
    cleanups.push(() => board.close());
    const relay = await startPtyRelay(opts.link, tapPath);
    cleanups.push(() => relay.stop());
    const tap = await openSerialLink({ path: tapPath, baudRate: opts.baudRate });
    cleanups.push(() => tap.close());

    const record = (direction: '<' | '>', chunk: Buffer) => writeSync(fd, formatChunk(direction, chunk, new Date()));
    const ended = new Promise<string>((resolve) => {
      tap.onData((chunk) => {
        record('<', chunk);
        board.write(chunk);
      });
      board.onData((chunk) => {
        record('>', chunk);
        tap.write(chunk);
      });
      board.onClose((reason) => resolve(`the device ${device} closed (${reason})`));
      tap.onClose((reason) => resolve(`the agent's pty closed (${reason})`));
      if (stop.aborted) resolve('stopped');
      stop.addEventListener('abort', () => resolve('stopped'), { once: true });
    });
    opts.onReady?.();
    return await ended;
  } finally {
    await cleanup();
  }
}

function openTrace(path: string): number {
  try {
    return openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    throw new QrvendError(ErrorCodes.CLI_USAGE, `cannot open the trace file ${path}: ${(err as Error).message}`, {
      hint: 'choose another --out (a symlink is refused)',
    });
  }
}
