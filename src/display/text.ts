/**
 * Text through Skia (@napi-rs/canvas): measuring, wrapping to a width, and drawing one line into
 * a box of a frame. Skia shapes the text (kerning, bidi), so Hebrew lays out right to left when
 * the direction is 'rtl'. A line is drawn on a small scratch canvas filled with the background
 * and copied into the frame: the frame stays our own framebuffer-layout buffer.
 */
import { createCanvas, type Canvas, type SKRSContext2D } from '@napi-rs/canvas';
import { ensureFonts, FONT_FAMILY } from './fonts.js';
import { pixelValue, type Frame, type Rgb } from './frame.js';

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

export class TextPainter {
  private canvas: Canvas;
  private ctx: SKRSContext2D;

  constructor() {
    ensureFonts();
    this.canvas = createCanvas(256, 64);
    this.ctx = this.canvas.getContext('2d');
  }

  private font(style: Pick<TextStyle, 'size' | 'bold'>): void {
    this.ctx.font = `${style.bold ? 'bold ' : ''}${style.size}px ${FONT_FAMILY}`;
  }

  /** Advance width of one line in pixels. */
  measure(text: string, style: Pick<TextStyle, 'size' | 'bold'>, direction: Direction = 'ltr'): number {
    this.font(style);
    this.ctx.direction = direction;
    return Math.ceil(this.ctx.measureText(text).width);
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
    const w = Math.max(0, Math.min(box.w, frame.width - box.x));
    const h = Math.max(0, Math.min(box.h, frame.height - box.y));
    if (w <= 0 || h <= 0 || box.x < 0 || box.y < 0) return 0;
    this.ensureSize(w, h);
    const ctx = this.ctx;
    ctx.fillStyle = cssColor(background);
    ctx.fillRect(0, 0, w, h);
    this.font(style);
    ctx.direction = direction;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'alphabetic';
    ctx.fillStyle = cssColor(style.color);
    // DejaVu's ascent is 0.93 em: the baseline sits that far below the top of the line's air.
    const top = Math.floor((box.h - lineHeight(style.size)) / 2);
    const baseline = top + Math.round(style.size * 1.04);
    ctx.fillText(text, box.w / 2, baseline);
    blit(frame, ctx.getImageData(0, 0, w, h).data, w, h, box.x, box.y);
    return Math.ceil(ctx.measureText(text).width);
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
  }
}

/** What drawImage accepts: a decoded image with a size. */
export type CanvasImage = Parameters<SKRSContext2D['drawImage']>[0] & { width: number; height: number };

/** Copy opaque RGBA pixels into the frame at (x, y), converting to its pixel format. */
function blit(frame: Frame, rgba: Uint8ClampedArray, w: number, h: number, x: number, y: number): void {
  const { pixels, rowPixels } = frame;
  const cols = Math.min(w, frame.width - x);
  const rows = Math.min(h, frame.height - y);
  const xrgb = frame.format === 'xrgb8888';
  for (let r = 0; r < rows; r++) {
    let i = r * w * 4;
    let o = (y + r) * rowPixels + x;
    for (let c = 0; c < cols; c++, i += 4, o++) {
      const rgb = (rgba[i]! << 16) | (rgba[i + 1]! << 8) | rgba[i + 2]!;
      pixels[o] = xrgb ? rgb : pixelValue('rgb565', rgb);
    }
  }
}
