/**
 * @napi-rs/canvas (Skia), loaded on first use: a machine whose display has no pixel output
 * (terminal only, or none) never maps the Skia library, which costs about 35 MB of resident
 * memory (docs/display.md).
 */
import { createRequire } from 'node:module';
import type * as Canvas from '@napi-rs/canvas';

const require = createRequire(import.meta.url);
let loaded: typeof Canvas | null = null;

export function skia(): typeof Canvas {
  loaded ??= require('@napi-rs/canvas') as typeof Canvas;
  return loaded;
}
