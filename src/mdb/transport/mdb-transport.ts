/**
 * From `mdb.port` to a way of opening the link: `sim` is the in-memory wire to the built-in VMC
 * simulator, anything else is a device path (a real port or a pty): on Linux read and written on
 * the event loop (tty-link.ts; serialport opens and configures it), elsewhere through serialport.
 */
import type { QrvendConfig } from '../../config/schema.js';
import { MemoryWire } from './memory-wire.js';
import { serialOpener } from './serial-link.js';
import { ttyOpener } from './tty-link.js';
import type { OpenLink } from './types.js';

export interface MdbTransport {
  open: OpenLink;
  /** Checked when the link goes quiet, to tell a vanished device from a silent one; null for `sim`. */
  devicePath: string | null;
  /** For `sim`: the wire whose `vmcEnd` a VmcSimulator attaches to (src/sim/vmc). */
  simWire: MemoryWire | null;
}

export function createMdbTransport(mdb: Pick<QrvendConfig['mdb'], 'port' | 'baudRate'>): MdbTransport {
  if (mdb.port === 'sim') {
    const wire = new MemoryWire('sim');
    return { open: wire.openAgent, devicePath: null, simWire: wire };
  }
  const device = { path: mdb.port, baudRate: mdb.baudRate };
  const open = process.platform === 'linux' ? ttyOpener(device) : serialOpener(device);
  return { open, devicePath: mdb.port, simWire: null };
}
