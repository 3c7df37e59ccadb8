/**
 * A frame: pixels laid out exactly like a Linux framebuffer (rows `stride` bytes apart,
 * little-endian 16-bit RGB565 or 32-bit XRGB8888), so a finished frame goes to /dev/fbN with one
 * write. Drawing works on whole row spans through TypedArray.fill/copyWithin: no per-pixel calls.
 */
import { ErrorCodes, QrvendError } from '../core/errors.js';

export type PixelFormat = 'rgb565' | 'xrgb8888';

export interface FrameGeometry {
  width: number;
  height: number;
  /** Bytes from the start of one row to the next (>= width * bytes per pixel). */
  stride: number;
  format: PixelFormat;
}

export interface Frame extends FrameGeometry {
  /** stride * height bytes, ready to be written to the framebuffer as is. */
  data: Buffer;
  /** The same memory as pixels; a row starts at y * rowPixels. */
  pixels: Uint16Array | Uint32Array;
  rowPixels: number;
}

/** A colour as 0xRRGGBB. */
export type Rgb = number;

export const Colors = {
  white: 0xffffff,
  black: 0x000000,
  green: 0x0a7d32,
  red: 0xc62828,
  grey: 0x555555,
} as const;

export function bytesPerPixel(format: PixelFormat): 2 | 4 {
  return format === 'rgb565' ? 2 : 4;
}

export function createFrame(geometry: FrameGeometry): Frame {
  const bpp = bytesPerPixel(geometry.format);
  const { width, height, stride } = geometry;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new QrvendError(ErrorCodes.DISPLAY_UNAVAILABLE, `display size ${width}x${height} is not usable`);
  }
  if (stride < width * bpp || stride % bpp !== 0) {
    throw new QrvendError(
      ErrorCodes.DISPLAY_UNAVAILABLE,
      `display stride ${stride} does not fit ${width} pixels of ${bpp * 8} bits`,
    );
  }
  // Buffer.alloc of this size gets its own ArrayBuffer at offset 0, so the typed views align.
  const data = Buffer.alloc(stride * height);
  const pixels =
    bpp === 2
      ? new Uint16Array(data.buffer, data.byteOffset, data.length / 2)
      : new Uint32Array(data.buffer, data.byteOffset, data.length / 4);
  return { ...geometry, data, pixels, rowPixels: stride / bpp };
}

/** The pixel value of a colour in the frame's format. */
export function pixelValue(format: PixelFormat, rgb: Rgb): number {
  if (format === 'xrgb8888') return rgb & 0xffffff;
  const r = (rgb >> 16) & 0xff;
  const g = (rgb >> 8) & 0xff;
  const b = rgb & 0xff;
  return ((r >> 3) << 11) | ((g >> 2) << 5) | (b >> 3);
}

/** Fill a rectangle, clipped to the frame. */
export function fillRect(frame: Frame, x: number, y: number, w: number, h: number, rgb: Rgb): void {
  const x0 = Math.max(0, Math.floor(x));
  const y0 = Math.max(0, Math.floor(y));
  const x1 = Math.min(frame.width, Math.floor(x + w));
  const y1 = Math.min(frame.height, Math.floor(y + h));
  if (x1 <= x0 || y1 <= y0) return;
  const value = pixelValue(frame.format, rgb);
  const { pixels, rowPixels } = frame;
  if (x0 === 0 && x1 === rowPixels) {
    // Whole rows with no padding between them: one fill.
    pixels.fill(value, y0 * rowPixels, y1 * rowPixels);
    return;
  }
  for (let row = y0; row < y1; row++) {
    const start = row * rowPixels + x0;
    pixels.fill(value, start, start + (x1 - x0));
  }
}

/** Repeat the span [x, x+w) of row `y` onto the `count` rows below it (for scaled drawing). */
export function repeatRowSpan(frame: Frame, x: number, y: number, w: number, count: number): void {
  const { pixels, rowPixels } = frame;
  const x0 = Math.max(0, x);
  const x1 = Math.min(frame.width, x + w);
  if (x1 <= x0 || y < 0 || y >= frame.height) return;
  const src = y * rowPixels + x0;
  const last = Math.min(frame.height - 1, y + count);
  for (let row = y + 1; row <= last; row++) pixels.copyWithin(row * rowPixels + x0, src, src + (x1 - x0));
}

/** The frame as tightly packed RGBA (for PNG encoding and for decoding in tests). */
export function frameToRgba(frame: Frame): Buffer {
  const { width, height, pixels, rowPixels } = frame;
  const out = Buffer.alloc(width * height * 4);
  let o = 0;
  for (let y = 0; y < height; y++) {
    let i = y * rowPixels;
    for (let x = 0; x < width; x++, i++, o += 4) {
      const p = pixels[i]!;
      if (frame.format === 'xrgb8888') {
        out[o] = (p >> 16) & 0xff;
        out[o + 1] = (p >> 8) & 0xff;
        out[o + 2] = p & 0xff;
      } else {
        // Expand 5/6 bits to 8 by replicating the top bits, so white stays 255.
        const r = (p >> 11) & 0x1f;
        const g = (p >> 5) & 0x3f;
        const b = p & 0x1f;
        out[o] = (r << 3) | (r >> 2);
        out[o + 1] = (g << 2) | (g >> 4);
        out[o + 2] = (b << 3) | (b >> 2);
      }
      out[o + 3] = 255;
    }
  }
  return out;
}

/** Wrap bytes read back from a framebuffer (or a file laid out like one) as a frame. */
export function frameFromBytes(geometry: FrameGeometry, bytes: Buffer): Frame {
  const frame = createFrame(geometry);
  bytes.copy(frame.data, 0, 0, Math.min(bytes.length, frame.data.length));
  return frame;
}

/** Degrees the picture is turned clockwise on the panel (display.rotate). */
export type Rotation = 0 | 90 | 180 | 270;

/** The geometry screens are laid out in: the panel's, with width and height swapped at 90/270. */
export function logicalGeometry(panel: FrameGeometry, rotate: Rotation): FrameGeometry {
  const turned = rotate === 90 || rotate === 270;
  const width = turned ? panel.height : panel.width;
  const height = turned ? panel.width : panel.height;
  return { width, height, stride: width * bytesPerPixel(panel.format), format: panel.format };
}

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Where a rectangle of the logical frame lands on the panel. */
export function rotateRect(rect: Rect, logical: FrameGeometry, rotate: Rotation): Rect {
  const { x, y, w, h } = rect;
  switch (rotate) {
    case 0:
      return rect;
    case 90:
      return { x: logical.height - y - h, y: x, w: h, h: w };
    case 180:
      return { x: logical.width - x - w, y: logical.height - y - h, w, h };
    case 270:
      return { x: y, y: logical.width - x - w, w: h, h: w };
  }
}

/**
 * Copy `rect` of the logical frame onto the panel frame turned by `rotate` degrees clockwise
 * (the whole frame when no rect is given). Same pixel format on both sides.
 */
export function rotateInto(
  panel: Frame,
  logical: Frame,
  rotate: Rotation,
  rect: Rect = { x: 0, y: 0, w: logical.width, h: logical.height },
): void {
  const src = logical.pixels;
  const dst = panel.pixels;
  const sRow = logical.rowPixels;
  const dRow = panel.rowPixels;
  const x0 = Math.max(0, rect.x);
  const y0 = Math.max(0, rect.y);
  const x1 = Math.min(logical.width, rect.x + rect.w);
  const y1 = Math.min(logical.height, rect.y + rect.h);
  const W = logical.width;
  const H = logical.height;
  for (let y = y0; y < y1; y++) {
    let s = y * sRow + x0;
    for (let x = x0; x < x1; x++, s++) {
      let o: number;
      if (rotate === 0) o = y * dRow + x;
      else if (rotate === 90) o = x * dRow + (H - 1 - y);
      else if (rotate === 180) o = (H - 1 - y) * dRow + (W - 1 - x);
      else o = (W - 1 - x) * dRow + y;
      dst[o] = src[s]!;
    }
  }
}
