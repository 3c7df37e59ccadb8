/**
 * DeviceInfo for gateway requests and the TerminalId this machine uses.
 * FWVersion names both firmwares that decide how a payment behaves: qrvend's own version and the
 * MDB adapter board's (from its `v,<version>,<id>` answer), e.g. "qrvend/0.1.0 mdb/1.4.2".
 */
import type { QrvendConfig } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import { VERSION } from '../core/version.js';
import { readHwSerial } from './hw-serial.js';

export interface DeviceInfo {
  HwSerial: string;
  FWVersion: string;
  Type: string;
}

export interface DeviceInfoOptions {
  /** The board's firmware version, or null before the board has answered `V`. */
  boardFirmware: string | null;
  /** An HwSerial already read (readHwSerial); read from the hardware when absent. */
  hwSerial?: string;
  root?: string;
  log?: Logger;
}

export function firmwareVersion(boardFirmware: string | null): string {
  return boardFirmware ? `qrvend/${VERSION} mdb/${boardFirmware}` : `qrvend/${VERSION}`;
}

export function deviceInfo(config: Pick<QrvendConfig, 'device'>, options: DeviceInfoOptions): DeviceInfo {
  const serial =
    options.hwSerial ?? readHwSerial({ override: config.device.hwSerial, root: options.root, log: options.log }).serial;
  return { HwSerial: serial, FWVersion: firmwareVersion(options.boardFirmware), Type: config.device.type };
}

/** machine.terminalId, or the HwSerial when it is null. */
export function terminalIdFor(
  config: { machine: Pick<QrvendConfig['machine'], 'terminalId'> },
  hwSerial: string,
): string {
  return config.machine.terminalId ?? hwSerial;
}
