/**
 * A frame as a PNG file, for headless machines and diagnostics. Written atomically (a temp file
 * in the same directory, then rename), so a reader never sees half a picture.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { PNG } from 'pngjs';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { frameToRgba, type Frame } from '../frame.js';

export function encodePng(frame: Frame): Buffer {
  return PNG.sync.write({ width: frame.width, height: frame.height, data: frameToRgba(frame) } as PNG, {
    colorType: 2,
  });
}

export function writePngAtomic(path: string, frame: Frame): void {
  const bytes = encodePng(frame);
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  try {
    writeFileSync(temp, bytes);
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw new QrvendError(
      ErrorCodes.DISPLAY_UNAVAILABLE,
      `PNG file ${path} cannot be written (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      { hint: 'check that the directory exists and qrvend may write it (display.png)', cause: err },
    );
  }
}
