/**
 * The Linux framebuffer (/dev/fbN). Its geometry comes from sysfs
 * (/sys/class/graphics/fbN/{virtual_size,bits_per_pixel,stride}, and `modes` for the visible size
 * when the virtual size is larger, e.g. with double buffering). A frame is written with one
 * positioned write at offset 0. The sysfs root is a parameter so tests use fixture directories.
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import type { Frame, FrameGeometry, PixelFormat } from '../frame.js';

function unusable(device: string, why: string, cause?: unknown): QrvendError {
  return new QrvendError(ErrorCodes.DISPLAY_UNAVAILABLE, `framebuffer ${device} is not usable: ${why}`, {
    hint:
      'check display.framebuffer, that the display is connected and its driver loaded ' +
      '(ls /sys/class/graphics), and that qrvend may write the device (group video)',
    cause,
  });
}

function readSysfs(dir: string, file: string, device: string): string {
  try {
    return readFileSync(join(dir, file), 'utf8').trim();
  } catch (err) {
    throw unusable(
      device,
      `cannot read ${join(dir, file)} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      err,
    );
  }
}

/** Geometry of a framebuffer device from sysfs; throws DISPLAY_UNAVAILABLE naming what is wrong. */
export function readFramebufferGeometry(device: string, sysfsRoot = '/sys'): FrameGeometry {
  const name = basename(device);
  if (!/^fb\d+$/.test(name)) throw unusable(device, 'the device name must be fbN, e.g. /dev/fb0');
  const dir = join(sysfsRoot, 'class', 'graphics', name);
  const size = /^(\d+),(\d+)$/.exec(readSysfs(dir, 'virtual_size', device));
  if (!size) throw unusable(device, `${join(dir, 'virtual_size')} is not "width,height"`);
  let width = Number(size[1]);
  let height = Number(size[2]);
  // The first mode line ("U:800x480p-0") is the visible size; the virtual size may be taller.
  try {
    const mode = /(\d+)x(\d+)/.exec(readFileSync(join(dir, 'modes'), 'utf8'));
    if (mode && Number(mode[1]) <= width && Number(mode[2]) <= height) {
      width = Number(mode[1]);
      height = Number(mode[2]);
    }
  } catch {
    // No modes file: the virtual size is the visible size.
  }
  const bpp = Number(readSysfs(dir, 'bits_per_pixel', device));
  let format: PixelFormat;
  if (bpp === 16) format = 'rgb565';
  else if (bpp === 32) format = 'xrgb8888';
  else
    throw unusable(
      device,
      `${bpp} bits per pixel is not supported (16 and 32 are); set the ` +
        `depth with fbset or in config.txt (framebuffer_depth=32)`,
    );
  const stride = Number(readSysfs(dir, 'stride', device));
  if (!Number.isInteger(stride) || stride < (width * bpp) / 8)
    throw unusable(device, `stride ${stride} is smaller than a row of ${width} pixels`);
  if (width < 1 || height < 1) throw unusable(device, `size ${width}x${height} is empty`);
  return { width, height, stride, format };
}

export interface Framebuffer {
  device: string;
  geometry: FrameGeometry;
  write(frame: Frame): void;
  /** Write only rows [firstRow, firstRow + rows) of the frame (the countdown tick). */
  writeRows(frame: Frame, firstRow: number, rows: number): void;
  close(): void;
}

/** Open the device for writing (never creating it: a missing /dev/fbN is an error, not a new file). */
export function openFramebuffer(device: string, sysfsRoot = '/sys'): Framebuffer {
  if (!existsSync(device)) throw unusable(device, 'the device does not exist');
  const geometry = readFramebufferGeometry(device, sysfsRoot);
  let fd: number;
  try {
    fd = openSync(device, 'r+');
  } catch (err) {
    throw unusable(
      device,
      `cannot open it for writing (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      err,
    );
  }
  let open = true;
  return {
    device,
    geometry,
    write(frame: Frame): void {
      if (frame.stride !== geometry.stride || frame.height !== geometry.height || frame.format !== geometry.format) {
        throw unusable(
          device,
          `frame ${frame.width}x${frame.height} ${frame.format} does not match the device geometry`,
        );
      }
      let written: number;
      try {
        written = writeSync(fd, frame.data, 0, frame.data.length, 0);
      } catch (err) {
        throw unusable(device, `write failed (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, err);
      }
      if (written !== frame.data.length)
        throw unusable(device, `short write: ${written} of ${frame.data.length} bytes`);
    },
    writeRows(frame: Frame, firstRow: number, rows: number): void {
      if (frame.stride !== geometry.stride || frame.height !== geometry.height || frame.format !== geometry.format) {
        throw unusable(
          device,
          `frame ${frame.width}x${frame.height} ${frame.format} does not match the device geometry`,
        );
      }
      const y0 = Math.max(0, Math.floor(firstRow));
      const y1 = Math.min(geometry.height, Math.ceil(firstRow + rows));
      if (y1 <= y0) return;
      const start = y0 * geometry.stride;
      const length = (y1 - y0) * geometry.stride;
      let written: number;
      try {
        written = writeSync(fd, frame.data, start, length, start);
      } catch (err) {
        throw unusable(device, `write failed (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, err);
      }
      if (written !== length) throw unusable(device, `short write: ${written} of ${length} bytes`);
    },
    close(): void {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}
