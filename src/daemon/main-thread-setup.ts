/**
 * The steps of the main thread's start-up that need no state of the daemon: who the machine is,
 * the display worker (when a display is configured), the memory notes logged once.
 */
import type { QrvendConfig } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import { readSecretToken } from '../start/secret-file.js';
import { readHwSerial } from '../device/hw-serial.js';
import { terminalIdFor } from '../device/device-info.js';
import { startDisplay, type DisplayHandle } from '../display/display-thread.js';
import { mallocTrimAvailable } from './malloc-trim.js';

/** Who the machine is: read before anything starts. */
export interface Identity {
  secretToken: ReturnType<typeof readSecretToken>;
  hwSerial: string;
  terminalId: string;
}

export interface IdentitySources {
  config: QrvendConfig;
  log: Logger;
  /** Root for hardware facts (tests use fixture trees). */
  hardwareRoot?: string;
}

export function readIdentity(options: IdentitySources): Identity {
  const { config, log } = options;
  const secretToken = readSecretToken(config.start.secretTokenFile);
  const hwSerial = readHwSerial({ override: config.device.hwSerial, root: options.hardwareRoot, log }).serial;
  return { secretToken, hwSerial, terminalId: terminalIdFor(config, hwSerial) };
}

export function openDisplay(config: QrvendConfig, log: Logger): DisplayHandle | null {
  const { display } = config;
  if (display.framebuffer === null && display.png === null && !display.terminal) return null;
  // QRVEND_TEST_SYSFS_ROOT: where the framebuffer's geometry is read (tests and `npm run bench`
  // point display.framebuffer at a regular file with a fixture beside it); /sys otherwise.
  const sysfsRoot = process.env.QRVEND_TEST_SYSFS_ROOT || undefined;
  const { catalog, machine } = config;
  return startDisplay({ display, catalog, machine, log, ...(sysfsRoot ? { sysfsRoot } : {}) });
}

export function logMemoryLimits(log: Logger, heapLimit: { heapLimitMb: number; limited: boolean }): void {
  if (!heapLimit.limited) {
    log.info(
      { heapLimitMb: heapLimit.heapLimitMb },
      'main thread heap is not capped: resident memory grows with garbage; start `qrvend run` through the ' +
        'installed qrvend command (it passes the heap flags)',
    );
  }
  if (!mallocTrimAvailable()) {
    log.info(
      { addon: 'dist/src/native/qrvend-trim.node' },
      'malloc trimming is off (the addon was not built: Node without its headers): resident memory keeps what ' +
        'malloc freed; rebuild with `npm run build` where include/node/node_api.h is installed',
    );
  }
}
