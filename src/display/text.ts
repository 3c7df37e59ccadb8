/** Text with the built-in font: measuring, wrapping, and drawing scaled glyphs into a frame. */
import { GLYPH_ADVANCE, GLYPH_HEIGHT, GLYPH_WIDTH, glyphRows } from './font.js';
import { pixelValue, repeatRowSpan, type Frame, type Rgb } from './frame.js';

function codePoints(text: string): number[] {
  return Array.from(text, (c) => c.codePointAt(0)!);
}

/** Width in pixels of a single line at a scale (no trailing spacing column). */
export function textWidth(text: string, scale: number): number {
  const n = codePoints(text).length;
  return n === 0 ? 0 : (n * GLYPH_ADVANCE - (GLYPH_ADVANCE - GLYPH_WIDTH)) * scale;
}

export function textHeight(scale: number): number {
  return GLYPH_HEIGHT * scale;
}

/** How many characters fit in `width` pixels at a scale. */
export function charsPerLine(width: number, scale: number): number {
  return Math.max(1, Math.floor((width + (GLYPH_ADVANCE - GLYPH_WIDTH) * scale) / (GLYPH_ADVANCE * scale)));
}

/**
 * Break text into lines of at most `maxChars` characters at spaces (a word longer than a line is
 * cut), keeping at most `maxLines` lines; a cut-off last line ends with "...".
 */
export function wrapText(text: string, maxChars: number, maxLines: number): string[] {
  const lines: string[] = [];
  let current: string[] = [];
  const flush = () => {
    lines.push(current.join(''));
    current = [];
  };
  for (const word of text.trim().split(/\s+/).filter((w) => w.length > 0)) {
    let chars = Array.from(word);
    const needed = current.length === 0 ? chars.length : current.length + 1 + chars.length;
    if (needed <= maxChars) {
      if (current.length > 0) current.push(' ');
      current.push(...chars);
      continue;
    }
    if (current.length > 0) flush();
    while (chars.length > maxChars) {
      current = chars.slice(0, maxChars);
      flush();
      chars = chars.slice(maxChars);
    }
    current = chars;
  }
  if (current.length > 0) flush();
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  const last = Array.from(kept[maxLines - 1]!);
  kept[maxLines - 1] = `${last.slice(0, Math.max(0, maxChars - 3)).join('')}...`;
  return kept;
}

/** Draw one line with its top-left corner at (x, y); pixels outside the frame are clipped. */
export function drawText(frame: Frame, text: string, x: number, y: number, scale: number, rgb: Rgb): void {
  const value = pixelValue(frame.format, rgb);
  const { pixels, rowPixels, width, height } = frame;
  const chars = codePoints(text);
  const spanWidth = textWidth(text, scale);
  for (let gy = 0; gy < GLYPH_HEIGHT; gy++) {
    const py = y + gy * scale;
    if (py < 0 || py >= height) continue;
    const rowStart = py * rowPixels;
    // Draw the first pixel row of this glyph row for the whole line, then copy it down.
    for (let ci = 0; ci < chars.length; ci++) {
      const mask = glyphRows(chars[ci]!)[gy]!;
      if (mask === 0) continue;
      const cx = x + ci * GLYPH_ADVANCE * scale;
      for (let gx = 0; gx < GLYPH_WIDTH; gx++) {
        if ((mask & (1 << (GLYPH_WIDTH - 1 - gx))) === 0) continue;
        const px0 = Math.max(0, cx + gx * scale);
        const px1 = Math.min(width, cx + (gx + 1) * scale);
        if (px1 > px0) pixels.fill(value, rowStart + px0, rowStart + px1);
      }
    }
    repeatRowSpan(frame, x, py, spanWidth, scale - 1);
  }
}
