/**
 * Text through Skia (@napi-rs/canvas): measuring, wrapping to a width, and drawing one line into
 * a box of a frame. Skia shapes the text (kerning, bidi), so Hebrew lays out right to left when
 * the direction is 'rtl'. A line is drawn on a small scratch canvas filled with the background
 * and copied into the frame: the frame stays our own framebuffer-layout buffer.
 */
import { createCanvas, type Canvas, type SKRSContext2D } from '@napi-rs/canvas';
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

export class TextPainter {
  private canvas: Canvas;
  private ctx: SKRSContext2D;

  constructor() {
    ensureFonts();
    this.canvas = createCanvas(256, 64);
    this.ctx = this.canvas.getContext('2d');
  }

  // Setting ctx.font parses a CSS font string: skip it when nothing changed.
  private currentFont = '';
  private currentDirection: Direction | '' = '';
  private readonly widths = new Map<string, number>();

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
  wrap(text: string, style: Pick<TextStyle, 'size' | 'bold'>, width: number, maxLines: number, direction: Direction = 'ltr'): string[] {
    const fits = (line: string) => this.measure(line, style, direction) <= width;
    const lines: string[] = [];
    let current = '';
    for (const word of text.trim().split(/\s+/).filter((w) => w.length > 0)) {
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
   * Draw one line centred in `box` (clipped to it and to the frame) on `background`. Returns the
   * width the text takes, so callers can check it fitted.
   */
  draw(frame: Frame, text: string, style: TextStyle, box: Box, background: Rgb, direction: Direction = 'ltr'): number {
    if (box.w <= 0 || box.h <= 0 || box.x < 0 || box.y < 0) return 0;
    const width = this.measure(text, style, direction);
    // Only the part of the box the words cover goes through Skia (the rest is background
    // already); a little slack for glyphs that reach past their advance.
    const slack = Math.ceil(style.size / 4);
    const left = Math.max(0, Math.floor((box.w - width) / 2) - slack);
    const right = Math.min(box.w, Math.ceil((box.w + width) / 2) + slack);
    const x = box.x + left;
    const w = Math.min(right - left, frame.width - x);
    const h = Math.min(box.h, frame.height - box.y);
    if (w <= 0 || h <= 0) return width;
    this.ensureSize(w, h);
    const ctx = this.ctx;
    ctx.fillStyle = cssColor(background);
    ctx.fillRect(0, 0, w, h);
    this.font(style, direction);
    ctx.textAlign = 'center';
    ctx.textBaseline = 'alphabetic';
    ctx.fillStyle = cssColor(style.color);
    // DejaVu's ascent is 0.93 em: the baseline sits that far below the top of the line's air.
    const top = Math.floor((box.h - lineHeight(style.size)) / 2);
    const baseline = top + Math.round(style.size * 1.04);
    ctx.fillText(text, box.w / 2 - left, baseline);
    blit(frame, ctx.getImageData(0, 0, w, h).data, w, h, x, box.y);
    return width;
  }

  /**
   * Draw several lines (and pictures) lying inside `region` in one go: one Skia pass and one
   * read-back for the whole block, which costs far less than one per line. Returns each text's
   * width, in order.
   */
  drawBlock(frame: Frame, items: readonly BlockItem[], region: Box, background: Rgb, direction: Direction = 'ltr'): number[] {
    const x = Math.max(0, region.x);
    const y = Math.max(0, region.y);
    const w = Math.min(region.w, frame.width - x);
    const h = Math.min(region.h, frame.height - y);
    const widths: number[] = [];
    if (w <= 0 || h <= 0) return items.filter((i) => i.kind === 'text').map(() => 0);
    this.ensureSize(w, h);
    const ctx = this.ctx;
    ctx.fillStyle = cssColor(background);
    ctx.fillRect(0, 0, w, h);
    ctx.textAlign = 'center';
    ctx.textBaseline = 'alphabetic';
    for (const item of items) {
      if (item.kind === 'image') {
        const { image, box } = item;
        const scale = Math.min(box.w / image.width, box.h / image.height);
        const iw = Math.max(1, Math.floor(image.width * scale));
        const ih = Math.max(1, Math.floor(image.height * scale));
        ctx.drawImage(image, box.x - x + Math.floor((box.w - iw) / 2), box.y - y + Math.floor((box.h - ih) / 2), iw, ih);
        continue;
      }
      const { text, style, box } = item;
      widths.push(this.measure(text, style, direction));
      ctx.fillStyle = cssColor(style.color);
      const top = Math.floor((box.h - lineHeight(style.size)) / 2);
      ctx.fillText(text, box.x - x + box.w / 2, box.y - y + top + Math.round(style.size * 1.04));
    }
    blit(frame, ctx.getImageData(0, 0, w, h).data, w, h, x, y);
    return widths;
  }

  /** Draw an image (the operator's logo) scaled into `box`, keeping its aspect ratio. */
  drawImage(frame: Frame, image: CanvasImage, box: Box, background: Rgb): Box {
    const scale = Math.min(box.w / image.width, box.h / image.height);
    const w = Math.max(1, Math.floor(image.width * scale));
    const h = Math.max(1, Math.floor(image.height * scale));
    const x = box.x + Math.floor((box.w - w) / 2);
    const y = box.y + Math.floor((box.h - h) / 2);
    this.ensureSize(w, h);
    this.ctx.fillStyle = cssColor(background);
    this.ctx.fillRect(0, 0, w, h);
    this.ctx.drawImage(image, 0, 0, w, h);
    blit(frame, this.ctx.getImageData(0, 0, w, h).data, w, h, x, y);
    return { x, y, w, h };
  }

  private ensureSize(w: number, h: number): void {
    if (this.canvas.width >= w && this.canvas.height >= h) return;
    this.canvas = createCanvas(Math.max(w, this.canvas.width), Math.max(h, this.canvas.height));
    this.ctx = this.canvas.getContext('2d');
    this.currentFont = '';
    this.currentDirection = '';
  }
}

/** Something drawBlock draws: a line of text or a picture, each in its box (frame pixels). */
export type BlockItem = { kind: 'text'; text: string; style: TextStyle; box: Box } | { kind: 'image'; image: CanvasImage; box: Box };

/** What drawImage accepts: a decoded image with a size. */
export type CanvasImage = Parameters<SKRSContext2D['drawImage']>[0] & { width: number; height: number };

/** Copy opaque RGBA pixels into the frame at (x, y), converting to its pixel format. */
function blit(frame: Frame, rgba: Uint8ClampedArray, w: number, h: number, x: number, y: number): void {
  const { pixels, rowPixels } = frame;
  const cols = Math.min(w, frame.width - x);
  const rows = Math.min(h, frame.height - y);
  // Read each pixel as one little-endian word: 0xAABBGGRR.
  const words = new Uint32Array(rgba.buffer, rgba.byteOffset, w * h);
  const xrgb = frame.format === 'xrgb8888';
  for (let r = 0; r < rows; r++) {
    let i = r * w;
    let o = (y + r) * rowPixels + x;
    const end = i + cols;
    if (xrgb) {
      for (; i < end; i++, o++) {
        const v = words[i]!;
        pixels[o] = ((v & 0xff) << 16) | (v & 0xff00) | ((v >>> 16) & 0xff);
      }
    } else {
      for (; i < end; i++, o++) {
        const v = words[i]!;
        pixels[o] = ((v & 0xf8) << 8) | ((v >>> 5) & 0x7e0) | ((v >>> 19) & 0x1f);
      }
    }
  }
}
