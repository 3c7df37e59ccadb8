/**
 * The kernel's GPIO character device (/dev/gpiochipN, uAPI v2) through our addon qrvend-gpio.node
 * (native/gpio-chardev.c): every board with a GPIO driver, the Raspberry Pi 5 family included.
 * Lines are found by chip (path or label) and line name (GPIO17) or offset, and held with the
 * consumer label `qrvend` until close() (docs/devices.md).
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { QrvendConfig } from '../../config/schema.js';
import { ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { GpioLines, OutputLine, ResetLine } from './lines.js';

export const CONSUMER = 'qrvend';
const ADDON = '../../native/qrvend-gpio.node';

export interface ChipInfo {
  name: string;
  label: string;
  lines: number;
}

export interface LineInfo {
  offset: number;
  name: string;
  consumer: string;
  used: boolean;
  output: boolean;
  openDrain: boolean;
  activeLow: boolean;
}

/** Request modes of the addon. */
export const LineMode = { asIs: 0, input: 1, output: 2, openDrain: 3 } as const;

/** The addon's calls (native/gpio-chardev.c); errors carry the errno's name as code. */
export interface GpioAddon {
  chipInfo(path: string): ChipInfo;
  lineInfos(path: string): LineInfo[];
  request(path: string, offset: number, consumer: string, mode: number, value: number): number;
  getValue(fd: number): number;
  setValue(fd: number, value: number): void;
  release(fd: number): void;
}

/** The addon, or the reason it cannot be loaded (built without Node's headers, wrong architecture). */
export function loadGpioAddon(): GpioAddon | Error {
  try {
    return createRequire(import.meta.url)(ADDON) as GpioAddon;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** /dev/gpiochipN paths in number order (under root for tests). */
export function listChips(devDir = '/dev'): string[] {
  let names: string[];
  try {
    names = readdirSync(devDir).filter((n) => /^gpiochip\d{1,3}$/.test(n));
  } catch {
    return [];
  }
  return names.sort((a, b) => Number(a.slice(8)) - Number(b.slice(8))).map((n) => join(devDir, n));
}

export type LineSpec = string | number;

export interface FoundLine {
  chipPath: string;
  chip: ChipInfo;
  info: LineInfo;
}

/** Where a configured line is, or a technician's sentence saying why it is not. */
export function findLine(addon: GpioAddon, chip: string | null, line: LineSpec, devDir = '/dev'): FoundLine | string {
  const all = listChips(devDir);
  let candidates: string[];
  if (chip === null) candidates = all;
  else if (chip.startsWith('/')) candidates = [chip];
  else candidates = all.filter((p) => safeChipInfo(addon, p)?.label === chip);
  if (candidates.length === 0) {
    return chip === null
      ? `no GPIO chip under ${devDir} (is the GPIO driver loaded? gpiodetect lists the chips)`
      : `no GPIO chip "${chip}" (gpiodetect lists the chips by path and label)`;
  }
  // An offset without a chip means the first chip, as gpioset does.
  if (typeof line === 'number' && chip === null) candidates = candidates.slice(0, 1);
  let lastError = '';
  for (const chipPath of candidates) {
    try {
      const info = addon.chipInfo(chipPath);
      const lines = addon.lineInfos(chipPath);
      const found = typeof line === 'number' ? lines[line] : lines.find((l) => l.name === line);
      if (found) return { chipPath, chip: info, info: found };
      lastError = typeof line === 'number' ? `${chipPath} has ${info.lines} lines, no offset ${line}` : '';
    } catch (err) {
      lastError = `${chipPath}: ${(err as Error).message}`;
    }
  }
  if (lastError !== '') return `line ${line}: ${lastError}`;
  return `no line named "${line}" on ${chip ?? 'any chip'} (gpioinfo lists the names)`;
}

function safeChipInfo(addon: GpioAddon, path: string): ChipInfo | null {
  try {
    return addon.chipInfo(path);
  } catch {
    return null;
  }
}

/** "held by <consumer>" for an EBUSY line, read back from the kernel's line info. */
export function busyReason(addon: GpioAddon, found: FoundLine): string {
  try {
    const info = addon.lineInfos(found.chipPath)[found.info.offset];
    if (info?.used) return `held by another consumer "${info.consumer || '(kernel, no label)'}"`;
  } catch {
    // fall through to the plain reason
  }
  return 'busy';
}

/** A held line's value as the kernel reads it, null when it cannot. */
function readValue(addon: GpioAddon, fd: number): number | null {
  try {
    return addon.getValue(fd);
  } catch {
    return null;
  }
}

export interface ChardevOptions {
  addon?: GpioAddon | Error;
  devDir?: string;
}

/** Requests the configured lines; null when no line could be had (logged, GPIO is then off). */
export function openChardevLines(
  config: QrvendConfig['gpio'],
  log: Logger,
  options: ChardevOptions = {},
): GpioLines | null {
  const addon = options.addon ?? loadGpioAddon();
  if (addon instanceof Error) {
    const msg = 'GPIO character device addon qrvend-gpio.node cannot be loaded (reinstall qrvend); GPIO is off';
    log.error({ err: addon.message, code: ErrorCodes.DEVICE_UNAVAILABLE }, msg);
    return null;
  }
  const held: number[] = [];
  let chipPath: string | null = null;
  const request = (key: string, spec: LineSpec | null, mode: number, value: number): number | null => {
    if (spec === null) return null;
    const found = findLine(addon, config.chip, spec, options.devDir);
    if (typeof found === 'string') {
      log.error({ code: ErrorCodes.DEVICE_UNAVAILABLE, line: spec }, `gpio.${key}: ${found}; it is left unwired`);
      return null;
    }
    try {
      const fd = addon.request(found.chipPath, found.info.offset, CONSUMER, mode, value);
      held.push(fd);
      chipPath ??= found.chipPath;
      return fd;
    } catch (err) {
      const e = err as Error & { code?: string };
      const why = e.code === 'EBUSY' ? busyReason(addon, found) : e.message;
      const where = `${found.chipPath} line ${found.info.offset}${found.info.name ? ` (${found.info.name})` : ''}`;
      const msg = `gpio.${key} ${where}: ${why}; it is left unwired`;
      log.error({ code: ErrorCodes.DEVICE_UNAVAILABLE, line: spec }, msg);
      return null;
    }
  };
  const ledFd = request('statusLedLine', config.statusLedLine, LineMode.output, 0);
  const resetFd = request('boardResetLine', config.boardResetLine, LineMode.openDrain, 1);
  const backlightFd = request('backlightLine', config.backlightLine, LineMode.output, 1);
  if (held.length === 0) return null;
  /** A write that fails is logged once per line and then ignored: GPIO never stops payments. */
  const failed = new Set<number>();
  const write = (fd: number, value: number) => {
    try {
      addon.setValue(fd, value);
    } catch (err) {
      const why = (err as Error).message;
      if (!failed.has(fd)) log.error({ err: why, code: ErrorCodes.DEVICE_UNAVAILABLE }, 'GPIO line write failed');
      failed.add(fd);
    }
  };
  const output = (fd: number | null): OutputLine | null =>
    fd === null ? null : { write: (on) => write(fd, on ? 1 : 0) };
  // Open drain: 0 drives the line low, 1 lets it float to the board's pull-up.
  const reset: ResetLine | null =
    resetFd === null ? null : { assert: () => write(resetFd, 0), release: () => write(resetFd, 1) };
  return {
    backend: 'chardev',
    chip: chipPath,
    led: output(ledFd),
    reset,
    backlight: output(backlightFd),
    readBack() {
      const read = (fd: number | null) => (fd === null || !held.includes(fd) ? null : readValue(addon, fd));
      return { led: read(ledFd), reset: read(resetFd), backlight: read(backlightFd) };
    },
    close() {
      // Releasing the request gives the lines back to the kernel (consumer cleared).
      for (const fd of held.splice(0)) {
        try {
          addon.release(fd);
        } catch (err) {
          log.warn({ err: (err as Error).message }, 'GPIO line did not close cleanly');
        }
      }
    },
  };
}
