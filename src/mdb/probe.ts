/**
 * For the technician doctor: is there an adapter board on this port, and what firmware does it
 * run? Opens the port, sends V, waits for `v,<version>,<id>`, closes. Other lines (r,ACK, status)
 * are skipped; noise is ignored.
 */
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { parseBoardLine } from './codec/index.js';
import { LineFramer, openSerialLink, type OpenLink } from './transport/index.js';

export interface ProbeOptions {
  path: string;
  baudRate: number;
  timeoutMs: number;
  /** For tests: open something other than a serial device. */
  open?: OpenLink;
}

export async function probeBoard(options: ProbeOptions): Promise<{ firmware: string; boardId: string }> {
  const link = await (options.open ?? (() => openSerialLink({ path: options.path, baudRate: options.baudRate })))();
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new QrvendError(
            ErrorCodes.SERIAL_LINK_LOST,
            `no answer to V from the MDB adapter on ${options.path} within ${options.timeoutMs} ms`,
            {
              hint: `check the board's power and wiring, and that mdb.baudRate (${options.baudRate}) matches the board`,
              details: { path: options.path, baudRate: options.baudRate },
            },
          ),
        );
      }, options.timeoutMs);
      const framer = new LineFramer(256, {
        onLine: (line) => {
          const parsed = parseBoardLine(line);
          if (parsed.ok && parsed.value.kind === 'version') {
            clearTimeout(timer);
            resolve({ firmware: parsed.value.firmware, boardId: parsed.value.boardId });
          }
        },
        onOverlong: () => {},
      });
      link.onData((chunk) => framer.push(chunk));
      link.onClose((reason) => {
        clearTimeout(timer);
        reject(
          new QrvendError(
            ErrorCodes.SERIAL_LINK_LOST,
            `the MDB adapter port ${options.path} closed during the probe: ${reason}`,
            { hint: 'check the cable and the board power' },
          ),
        );
      });
      link.write('V\r\n');
    });
  } finally {
    await link.close();
  }
}
