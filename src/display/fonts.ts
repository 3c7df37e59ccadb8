/**
 * The typeface: DejaVu Sans (Latin, Polish, Hebrew and the currency signs) from the
 * dejavu-fonts-ttf npm package, registered with Skia under a family name of our own, so a screen
 * never depends on which fonts the machine has installed.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { skia } from './skia.js';

/** Our own family name: a system font of the same name can never be picked instead. */
export const FONT_FAMILY = 'QrvendSans';

const require = createRequire(import.meta.url);
let registered = false;

/** The TTF files used, resolved in node_modules (exported for the doctor and tests). */
export function fontFiles(): { regular: string; bold: string } {
  // The package has no "main": resolve its package.json, the fonts are in ttf/ beside it.
  const dir = join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
  return { regular: join(dir, 'DejaVuSans.ttf'), bold: join(dir, 'DejaVuSans-Bold.ttf') };
}

/** Register the fonts once per thread; throws DISPLAY_UNAVAILABLE when they cannot be loaded. */
export function ensureFonts(): void {
  if (registered) return;
  const files = fontFiles();
  for (const file of [files.regular, files.bold]) {
    if (skia().GlobalFonts.registerFromPath(file, FONT_FAMILY) === null) {
      throw new QrvendError(ErrorCodes.DISPLAY_UNAVAILABLE, `the display font ${file} could not be loaded`, {
        hint: 'reinstall qrvend: the font comes with its npm dependencies (dejavu-fonts-ttf)',
      });
    }
  }
  registered = true;
}
