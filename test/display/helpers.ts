/** Shared helpers for the display tests: fixture paths, fake framebuffer files, QR decoding. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import jsqr from 'jsqr';
import { PNG } from 'pngjs';
import type { DisplayConfig } from '../../src/display/context.js';
import { frameToRgba, type Frame, type FrameGeometry } from '../../src/display/frame.js';

/** test/fixtures/display in the source tree (tests run from dist/test/display). */
export const DISPLAY_FIXTURES = fileURLToPath(new URL('../../../test/fixtures/display/', import.meta.url));

export const FB_FIXTURES = [
  { name: 'dsi-800x480-32', width: 800, height: 480, stride: 3200, format: 'xrgb8888' },
  { name: 'dsi-800x480-16', width: 800, height: 480, stride: 1600, format: 'rgb565' },
  { name: 'spi-480x320-16', width: 480, height: 320, stride: 960, format: 'rgb565' },
  { name: 'spi-480x320-32', width: 480, height: 320, stride: 1920, format: 'xrgb8888' },
  { name: 'hdmi-1024x600-32-double', width: 1024, height: 600, stride: 4096, format: 'xrgb8888' },
  { name: 'hdmi-1024x600-16-padded', width: 1024, height: 600, stride: 2304, format: 'rgb565' },
] as const satisfies readonly (FrameGeometry & { name: string })[];

export function sysfsRoot(fixture: string): string {
  return join(DISPLAY_FIXTURES, fixture);
}

export function makeTempDir(prefix = 'qrvend-display-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A regular file standing in for /dev/fb0: `bytes` long and filled with a pattern, so a test sees
 * that the whole frame was written over it.
 */
export function makeFramebufferFile(dir: string, bytes: number): string {
  const path = join(dir, 'fb0');
  writeFileSync(path, Buffer.alloc(bytes, 0x5a));
  return path;
}

// jsqr is CommonJS: under NodeNext the default import is module.exports, whose .default is the decoder.
const jsQR = jsqr.default;

export function decodeRgba(rgba: Uint8Array, width: number, height: number): string | null {
  const result = jsQR(new Uint8ClampedArray(rgba.buffer, rgba.byteOffset, rgba.byteLength), width, height, {
    inversionAttempts: 'dontInvert',
  });
  return result ? result.data : null;
}

export function decodeFrame(frame: Frame): string | null {
  return decodeRgba(frameToRgba(frame), frame.width, frame.height);
}

export function decodePng(bytes: Buffer): { text: string | null; width: number; height: number } {
  const png = PNG.sync.read(bytes);
  return { text: decodeRgba(png.data, png.width, png.height), width: png.width, height: png.height };
}

/** Texts the QR tests must round-trip: short, URL-like, and long (up to 512 characters). */
export const QR_TEXTS = {
  short: 'QRVEND-DEMO-0001',
  url: 'https://pay.example.com/qr/v1?tid=T-0042&amount=1.50&cur=EUR&ref=8f14e45fceea167a',
  long: Array.from(
    { length: 512 },
    (_, i) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~'[(i * 7 + 3) % 66],
  ).join(''),
};

/** A display config as the schema makes it: the given keys, the rest at their defaults. */
export function displayConfig(over: Partial<DisplayConfig> = {}): DisplayConfig {
  return {
    framebuffer: null,
    png: null,
    terminal: false,
    width: 320,
    height: 240,
    language: 'en',
    locale: null,
    readerGraceS: 30,
    rotate: 0,
    logo: null,
    receiptUrl: null,
    colors: { background: '#ffffff', text: '#1a1a1a', accent: '#0a7d32', error: '#c62828', muted: '#5f6368' },
    ...over,
  };
}
