/**
 * The hardware serial number (DeviceInfo.HwSerial, and the default TerminalId).
 *
 * Order: device.hwSerial from config; the device tree's serial-number (NUL-terminated, at
 * /proc/device-tree or /sys/firmware/devicetree/base); the `Serial` line of /proc/cpuinfo (older
 * Raspberry Pi kernels); then, with a WARN, /etc/machine-id (stable per OS install, but it changes
 * when the SD card is re-imaged). An all-zero serial (some boards and VMs) counts as none.
 * `root` prefixes every path so tests read fixture trees.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import type { Logger } from '../core/log.js';

export type HwSerialSource = 'config' | 'device-tree' | 'cpuinfo' | 'machine-id';

export interface HwSerial {
  serial: string;
  source: HwSerialSource;
  /** The file it came from (null for config). */
  path: string | null;
}

export interface ReadHwSerialOptions {
  /** device.hwSerial: wins over the hardware when set. */
  override?: string | null;
  /** Filesystem root, "/" on a real machine. */
  root?: string;
  log?: Logger;
}

export const DEVICE_TREE_SERIAL_PATHS = [
  'proc/device-tree/serial-number',
  'sys/firmware/devicetree/base/serial-number',
] as const;
export const CPUINFO_PATH = 'proc/cpuinfo';
export const MACHINE_ID_PATH = 'etc/machine-id';

function readOptional(path: string): string | null {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return null;
  }
}

/** Trim NULs and whitespace; an empty or all-zero value is no serial. */
export function cleanSerial(raw: string): string | null {
  const value = raw.replace(/\0/g, '').trim();
  if (value === '' || /^0+$/.test(value)) return null;
  return value;
}

/** The value of the `Serial` line of /proc/cpuinfo text, if any. */
export function serialFromCpuinfo(text: string): string | null {
  const m = /^Serial\s*:\s*(\S+)\s*$/m.exec(text);
  return m ? cleanSerial(m[1]!) : null;
}

export function readHwSerial(options: ReadHwSerialOptions = {}): HwSerial {
  if (options.override) return { serial: options.override, source: 'config', path: null };
  const root = options.root ?? '/';
  for (const rel of DEVICE_TREE_SERIAL_PATHS) {
    const path = join(root, rel);
    const raw = readOptional(path);
    const serial = raw === null ? null : cleanSerial(raw);
    if (serial) return { serial, source: 'device-tree', path };
  }
  const cpuinfoPath = join(root, CPUINFO_PATH);
  const cpuinfo = readOptional(cpuinfoPath);
  const fromCpu = cpuinfo === null ? null : serialFromCpuinfo(cpuinfo);
  if (fromCpu) return { serial: fromCpu, source: 'cpuinfo', path: cpuinfoPath };
  const machineIdPath = join(root, MACHINE_ID_PATH);
  const raw = readOptional(machineIdPath);
  const machineId = raw === null ? null : cleanSerial(raw);
  if (machineId) {
    options.log?.warn(
      { code: ErrorCodes.DEVICE_UNAVAILABLE, source: 'machine-id', path: machineIdPath },
      'no hardware serial number (device tree or /proc/cpuinfo); using /etc/machine-id as ' +
        'HwSerial. It changes when the OS is reinstalled: set device.hwSerial to pin it',
    );
    return { serial: machineId, source: 'machine-id', path: machineIdPath };
  }
  throw new QrvendError(
    ErrorCodes.DEVICE_UNAVAILABLE,
    'no hardware serial number found (device tree, /proc/cpuinfo, /etc/machine-id)',
    {
      hint: 'set device.hwSerial in the configuration',
      details: { root },
    },
  );
}
