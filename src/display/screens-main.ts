/**
 * `npm run screens [DIR]`: a PNG of every screen in every language at two panel sizes (800x480
 * XRGB8888 and 480x320 RGB565), plus a portrait 90-degree example, into DIR (default screens/,
 * which git ignores). For looking at what a shopper sees.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { FrameGeometry } from './frame.js';
import { gallery } from './gallery.js';
import { writePngAtomic } from './outputs/png.js';

const PANELS: { label: string; geometry: FrameGeometry; rotate: 0 | 90 }[] = [
  { label: '800x480', geometry: { width: 800, height: 480, stride: 3200, format: 'xrgb8888' }, rotate: 0 },
  { label: '480x320', geometry: { width: 480, height: 320, stride: 960, format: 'rgb565' }, rotate: 0 },
];

const out = resolve(process.argv[2] ?? 'screens');
let count = 0;
for (const { label, geometry, rotate } of PANELS) {
  const dir = join(out, label);
  mkdirSync(dir, { recursive: true });
  for (const picture of gallery(geometry, rotate)) {
    writePngAtomic(join(dir, `${picture.name}.${picture.language}.png`), picture.panel);
    count++;
  }
}
process.stdout.write(`wrote ${count} screens under ${out}\n`);
