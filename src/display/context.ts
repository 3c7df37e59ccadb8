/** The display's settings turned into what layout and render take (palette, catalog, logo). */
import { readFile } from 'node:fs/promises';
import type { QrvendConfig } from '../config/schema.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import type { Rgb } from './frame.js';
import { defaultLayoutContext, type LayoutContext, type Palette } from './layout.js';
import { skia } from './skia.js';
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
  return {
    background: rgb(c.background),
    text: rgb(c.text),
    accent: rgb(c.accent),
    error: rgb(c.error),
    muted: rgb(c.muted),
  };
}

export function layoutContextOf(display: DisplayConfig, catalog: ProductCatalog = {}): LayoutContext {
  return defaultLayoutContext({
    language: display.language,
    locale: display.locale,
    palette: paletteOf(display),
    catalog,
    receiptUrl: display.receiptUrl,
  });
}

/** Decode display.logo (PNG or SVG); rejects with DISPLAY_UNAVAILABLE naming what was wrong. */
export async function loadLogo(path: string): Promise<CanvasImage> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.DISPLAY_UNAVAILABLE,
      `display.logo ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      { cause: err },
    );
  }
  if (bytes.length > MAX_LOGO_BYTES)
    throw new QrvendError(
      ErrorCodes.DISPLAY_UNAVAILABLE,
      `display.logo ${path} is ${bytes.length} bytes; at most ${MAX_LOGO_BYTES} are read`,
    );
  const image = new (skia().Image)();
  // Without a listener a decoding failure is also thrown as an uncaught error.
  image.onerror = () => {};
  image.src = bytes;
  try {
    // The pixels are decoded off-thread; drawing before this resolves draws nothing.
    await image.decode();
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.DISPLAY_UNAVAILABLE,
      `display.logo ${path} is not a PNG or SVG picture that can be decoded (${(err as Error).message})`,
      {
        hint: 'use a PNG or SVG file',
        cause: err,
      },
    );
  }
  if (!(image.width > 0 && image.height > 0))
    throw new QrvendError(ErrorCodes.DISPLAY_UNAVAILABLE, `display.logo ${path} has no size`, {
      hint: 'use a PNG or SVG file',
    });
  return image as unknown as CanvasImage;
}
