/** The display's settings turned into what layout and render take (palette, catalog, logo). */
import { readFileSync } from 'node:fs';
import { Image } from '@napi-rs/canvas';
import type { QrvendConfig } from '../config/schema.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import type { Rgb } from './frame.js';
import { defaultLayoutContext, type LayoutContext, type Palette } from './layout.js';
import type { CanvasImage } from './text.js';

export type DisplayConfig = QrvendConfig['display'];
export type ProductCatalog = LayoutContext['catalog'];

/** The largest logo file read (a logo is a small picture, not a photo album). */
const MAX_LOGO_BYTES = 2 * 1024 * 1024;

function rgb(hex: string): Rgb {
  return Number.parseInt(hex.slice(1), 16);
}

export function paletteOf(display: DisplayConfig): Palette {
  const c = display.colors;
  return { background: rgb(c.background), text: rgb(c.text), accent: rgb(c.accent), error: rgb(c.error), muted: rgb(c.muted) };
}

export function layoutContextOf(display: DisplayConfig, catalog: ProductCatalog = {}): LayoutContext {
  return defaultLayoutContext({ language: display.language, locale: display.locale, palette: paletteOf(display), catalog, receiptUrl: display.receiptUrl });
}

/** Decode display.logo (PNG or SVG); throws DISPLAY_UNAVAILABLE naming what was wrong. */
export function loadLogo(path: string): CanvasImage {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new QrvendError(ErrorCodes.DISPLAY_UNAVAILABLE, `display.logo ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
  }
  if (bytes.length > MAX_LOGO_BYTES) throw new QrvendError(ErrorCodes.DISPLAY_UNAVAILABLE, `display.logo ${path} is ${bytes.length} bytes; at most ${MAX_LOGO_BYTES} are read`);
  const image = new Image();
  image.src = bytes;
  if (!(image.width > 0 && image.height > 0) || !image.complete) {
    throw new QrvendError(ErrorCodes.DISPLAY_UNAVAILABLE, `display.logo ${path} is not a PNG or SVG picture that can be decoded`, { hint: 'use a PNG or SVG file' });
  }
  return image as unknown as CanvasImage;
}
