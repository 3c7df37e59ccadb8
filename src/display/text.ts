/**
 * Text through Skia (@napi-rs/canvas): measuring, wrapping to a width, and drawing one line into
 * a box of a frame. Skia shapes the text (kerning, bidi), so Hebrew lays out right to left when
 * the direction is 'rtl'. A line is drawn on a small scratch canvas filled with the background
 * and copied into the frame: the frame stays our own framebuffer-layout buffer.
 */
import type { Canvas, SKRSContext2D } from '@napi-rs/canvas';
import { skia } from './skia.js';
import { ensureFonts, FONT_FAMILY } from './fonts.js';
import type { Frame, Rgb } from './frame.js';

export interface TextStyle {
  /** Font size in pixels. */
  size: number;
  bold: boolean;
  color: Rgb;
}

export type Direction = 'ltr' | 'rtl';

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Height of a line of text at a size: DejaVu's ascent plus descent with a little air. */
export function lineHeight(size: number): number {
  return Math.ceil(size * 1.25);
}

function cssColor(rgb: Rgb): string {
  return `#${(rgb & 0xffffff).toString(16).padStart(6, '0')}`;
}

const ELLIPSIS = '\u2026';
const MEASURE_CACHE_SIZE = 1024;
/** Lines kept as pixels: a few screens' worth in every language shown (about 40 KB each at 800x480). */
const LINE_CACHE_SIZE = 96;

export class TextPainter {
  private canvas: Canvas;
  private ctx: SKRSContext2D;

  constructor() {
    ensureFonts();
    this.canvas = skia().createCanvas(256, 64);
    this.ctx = this.canvas.getContext('2d');
  }

  // Setting ctx.font parses a CSS font string: skip it when nothing changed.
  private currentFont = '';
  private currentDirection: Direction | '' = '';
  private readonly widths = new Map<string, number>();
  private readonly bitmaps = new Map<string, Bitmap>();
  private picture: { key: string; image: CanvasImage; bitmap: Bitmap } | null = null;

  private font(style: Pick<TextStyle, 'size' | 'bold'>, direction: Direction): string {
    const font = `${style.bold ? 'bold ' : ''}${style.size}px ${FONT_FAMILY}`;
    if (font !== this.currentFont) {
      this.ctx.font = font;
      this.currentFont = font;
    }
    if (direction !== this.currentDirection) {
      this.ctx.direction = direction;
      this.currentDirection = direction;
    }
    return font;
  }

  /** Advance width of one line in pixels (remembered: screens measure the same words often). */
  measure(text: string, style: Pick<TextStyle, 'size' | 'bold'>, direction: Direction = 'ltr'): number {
    const font = this.font(style, direction);
    const key = `${font}\u0000${direction}\u0000${text}`;
    const known = this.widths.get(key);
    if (known !== undefined) return known;
    const width = Math.ceil(this.ctx.measureText(text).width);
    if (this.widths.size >= MEASURE_CACHE_SIZE) this.widths.clear();
    this.widths.set(key, width);
    return width;
  }

  /**
   * Break text into lines no wider than `width` at spaces (a word wider than a line is cut),
   * keeping at most `maxLines`; a cut-off last line ends with an ellipsis.
   */
  wrap(
    text: string,
    style: Pick<TextStyle, 'size' | 'bold'>,
    width: number,
    maxLines: number,
    direction: Direction = 'ltr',
  ): string[] {
    const fits = (line: string) => this.measure(line, style, direction) <= width;
    const lines: string[] = [];
    let current = '';
    // Break at ordinary spaces only: a no-break space ("1,50\u00a0€", "Merci\u00a0!") holds.
    for (const word of text.split(/[ \t\n]+/).filter((w) => w.length > 0)) {
      const joined = current === '' ? word : `${current} ${word}`;
      if (fits(joined)) {
        current = joined;
        continue;
      }
      if (current !== '') lines.push(current);
      current = word;
      // A single word wider than the line: cut it where it stops fitting.
      while (!fits(current)) {
        const chars = Array.from(current);
        let n = chars.length - 1;
        while (n > 1 && !fits(chars.slice(0, n).join(''))) n--;
        lines.push(chars.slice(0, n).join(''));
        current = chars.slice(n).join('');
      }
    }
    if (current !== '') lines.push(current);
    if (lines.length <= maxLines) return lines;
    const kept = lines.slice(0, maxLines);
    let last = Array.from(kept[maxLines - 1]!);
    while (last.length > 0 && !fits(`${last.join('')}${ELLIPSIS}`)) last = last.slice(0, -1);
    kept[maxLines - 1] = `${last.join('').trimEnd()}${ELLIPSIS}`;
    return kept;
  }

  /**
   * Draw one line centred in `box` (clipped to it and to the frame). Returns the width the text
   * takes, so callers can check it fitted.
   */
  draw(frame: Frame, text: string, style: TextStyle, box: Box, background: Rgb, direction: Direction = 'ltr'): number {
    const width = this.measure(text, style, direction);
    if (box.w <= 0 || box.h <= 0) return width;
    const line = this.line(text, style, box.h, background, direction, frame.format);
    const x = box.x + Math.floor(box.w / 2) - line.centre;
    copyPixels(frame, line, x, box.y, box);
    return width;
  }

  /**
   * Draw several lines (and pictures) in their boxes. Returns each text's width, in order.
   * The frame under the boxes is expected to be the background already.
   */
  drawBlock(frame: Frame, items: readonly BlockItem[], background: Rgb, direction: Direction = 'ltr'): number[] {
    const widths: number[] = [];
    for (const item of items) {
      if (item.kind === 'image') this.drawImage(frame, item.image, item.box, background);
      else widths.push(this.draw(frame, item.text, item.style, item.box, background, direction));
    }
    return widths;
  }

  /** Draw an image (the operator's logo) scaled into `box`, keeping its aspect ratio. */
  drawImage(frame: Frame, image: CanvasImage, box: Box, background: Rgb): Box {
    const scale = Math.min(box.w / image.width, box.h / image.height);
    const w = Math.max(1, Math.floor(image.width * scale));
    const h = Math.max(1, Math.floor(image.height * scale));
    const x = box.x + Math.floor((box.w - w) / 2);
    const y = box.y + Math.floor((box.h - h) / 2);
    const key = `image\u0000${w}x${h}\u0000${background}\u0000${frame.format}`;
    let bitmap = this.picture?.key === key && this.picture.image === image ? this.picture.bitmap : null;
    if (bitmap === null) {
      this.ensureSize(w, h);
      this.ctx.fillStyle = cssColor(background);
      this.ctx.fillRect(0, 0, w, h);
      this.ctx.drawImage(image, 0, 0, w, h);
      bitmap = toBitmap(this.ctx.getImageData(0, 0, w, h).data, w, h, 0, frame.format);
      this.picture = { key, image, bitmap };
    }
    copyPixels(frame, bitmap, x, y, { x, y, w, h });
    return { x, y, w, h };
  }

  /**
   * A line of text as pixels in the frame's format, rendered once and remembered: a vending
   * machine shows the same few lines over and over, and reading pixels back from Skia is the
   * expensive part (and allocates; see docs/display.md).
   */
  private line(
    text: string,
    style: TextStyle,
    height: number,
    background: Rgb,
    direction: Direction,
    format: Frame['format'],
  ): Bitmap {
    const font = this.font(style, direction);
    const key =
      `${font}\u0000${direction}\u0000${style.color}\u0000` +
      `${background}\u0000${height}\u0000${format}\u0000${text}`;
    const known = this.bitmaps.get(key);
    if (known !== undefined) {
      // Least recently used goes first: move this one to the end.
      this.bitmaps.delete(key);
      this.bitmaps.set(key, known);
      return known;
    }
    const width = this.measure(text, style, direction);
    // Slack for glyphs that reach past their advance (italic overhangs, accents).
    const slack = Math.ceil(style.size / 4);
    const w = Math.max(1, width + 2 * slack);
    const h = Math.max(1, height);
    this.ensureSize(w, h);
    const ctx = this.ctx;
    ctx.fillStyle = cssColor(background);
    ctx.fillRect(0, 0, w, h);
    this.font(style, direction);
    ctx.textAlign = 'center';
    ctx.textBaseline = 'alphabetic';
    ctx.fillStyle = cssColor(style.color);
    // DejaVu's ascent is 0.93 em: the baseline sits that far below the top of the line's air.
    const top = Math.floor((height - lineHeight(style.size)) / 2);
    ctx.fillText(text, w / 2, top + Math.round(style.size * 1.04));
    const bitmap = toBitmap(ctx.getImageData(0, 0, w, h).data, w, h, Math.floor(w / 2), format);
    if (this.bitmaps.size >= LINE_CACHE_SIZE) this.bitmaps.delete(this.bitmaps.keys().next().value!);
    this.bitmaps.set(key, bitmap);
    return bitmap;
  }

  private ensureSize(w: number, h: number): void {
    if (this.canvas.width >= w && this.canvas.height >= h) return;
    this.canvas = skia().createCanvas(Math.max(w, this.canvas.width), Math.max(h, this.canvas.height));
    this.ctx = this.canvas.getContext('2d');
    this.currentFont = '';
    this.currentDirection = '';
  }
}

/** Something drawBlock draws: a line of text or a picture, each in its box (frame pixels). */
export type BlockItem =
  { kind: 'text'; text: string; style: TextStyle; box: Box } | { kind: 'image'; image: CanvasImage; box: Box };

/** What drawImage accepts: a decoded image with a size. */
export type CanvasImage = Parameters<SKRSContext2D['drawImage']>[0] & { width: number; height: number };

/** Pixels ready for a frame of one format; `centre` is the column the text is centred on. */
interface Bitmap {
  w: number;
  h: number;
  centre: number;
  pixels: Uint32Array;
}

/** Convert opaque RGBA read back from Skia into frame pixel values. */
function toBitmap(rgba: Uint8ClampedArray, w: number, h: number, centre: number, format: Frame['format']): Bitmap {
  // Read each pixel as one little-endian word: 0xAABBGGRR.
  const words = new Uint32Array(rgba.buffer, rgba.byteOffset, w * h);
  const pixels = new Uint32Array(w * h);
  if (format === 'xrgb8888') {
    for (let i = 0; i < pixels.length; i++) {
      const v = words[i]!;
      pixels[i] = ((v & 0xff) << 16) | (v & 0xff00) | ((v >>> 16) & 0xff);
    }
  } else {
    for (let i = 0; i < pixels.length; i++) {
      const v = words[i]!;
      pixels[i] = ((v & 0xf8) << 8) | ((v >>> 5) & 0x7e0) | ((v >>> 19) & 0x1f);
    }
  }
  return { w, h, centre, pixels };
}

/** Copy a bitmap into the frame with its top-left at (x, y), clipped to `clip` and the frame. */
function copyPixels(frame: Frame, bitmap: Bitmap, x: number, y: number, clip: Box): void {
  const x0 = Math.max(x, clip.x, 0);
  const y0 = Math.max(y, clip.y, 0);
  const x1 = Math.min(x + bitmap.w, clip.x + clip.w, frame.width);
  const y1 = Math.min(y + bitmap.h, clip.y + clip.h, frame.height);
  if (x1 <= x0 || y1 <= y0) return;
  const { pixels, rowPixels } = frame;
  for (let row = y0; row < y1; row++) {
    const from = (row - y) * bitmap.w + (x0 - x);
    pixels.set(bitmap.pixels.subarray(from, from + (x1 - x0)), row * rowPixels + x0);
  }
}
