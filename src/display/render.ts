/**
 * Drawing a Layout into a frame: a white page, the QR code (largest whole module size that fits
 * with its quiet zone, centred), the headline and the lines under it, the whole group centred
 * vertically. Pure apart from writing into the frame it is given; no I/O.
 */
import { ErrorCodes, QrvendError } from '../core/errors.js';
import type { Screen } from '../ipc/messages.js';
import { Colors, fillRect, type Frame } from './frame.js';
import { screenLayout, type Layout } from './layout.js';
import { drawQr, modulePixels, qrMatrix, QUIET_ZONE, type ErrorCorrection } from './qr.js';
import { charsPerLine, drawText, textHeight, textWidth, wrapText } from './text.js';

export interface RenderOptions {
  errorCorrection?: ErrorCorrection;
}

export interface RenderResult {
  /** Where the QR code went (quiet zone included), or null for a screen without one. */
  qr: { x: number; y: number; side: number; modulePixels: number; version: number } | null;
  /** The text lines drawn, headline first. */
  text: string[];
}

/** Font scale for small text: about 1/160 of the height, at least 24 characters across. */
export function textScale(width: number, height: number): number {
  return Math.max(1, Math.min(Math.floor(height / 160), Math.floor(width / (24 * 6))));
}

interface TextBlock {
  rows: { text: string; scale: number; color: number }[];
  height: number;
}

/** Space under each line of text, proportional to its size (the last one is the bottom margin). */
export function lineGap(scale: number): number {
  return 2 * scale;
}

function textBlock(layout: Layout, width: number, scale: number, maxLines: number): TextBlock {
  const usable = width - 4 * scale;
  const rows: TextBlock['rows'] = [];
  if (layout.headline) {
    // The headline is twice the text size when it fits across, else as large as fits.
    let big = 2 * scale;
    while (big > scale && textWidth(layout.headline, big) > usable) big--;
    for (const line of wrapText(layout.headline, charsPerLine(usable, big), 2)) rows.push({ text: line, scale: big, color: layout.headlineColor });
  }
  const small: string[] = [];
  for (const line of layout.lines) small.push(...wrapText(line, charsPerLine(usable, scale), maxLines));
  for (const line of small.slice(0, maxLines)) rows.push({ text: line, scale, color: Colors.black });
  const height = rows.reduce((h, r) => h + textHeight(r.scale) + lineGap(r.scale), 0);
  return { rows, height };
}

function drawBlock(frame: Frame, block: TextBlock, top: number): void {
  let y = top;
  for (const row of block.rows) {
    drawText(frame, row.text, Math.floor((frame.width - textWidth(row.text, row.scale)) / 2), y, row.scale, row.color);
    y += textHeight(row.scale) + lineGap(row.scale);
  }
}

export function renderLayout(frame: Frame, layout: Layout, options: RenderOptions = {}): RenderResult {
  const { width, height } = frame;
  fillRect(frame, 0, 0, width, height, Colors.white);
  const scale = textScale(width, height);
  if (layout.qrText === null) {
    const block = textBlock(layout, width, scale, 6);
    drawBlock(frame, block, Math.floor((height - block.height) / 2));
    return { qr: null, text: block.rows.map((r) => r.text) };
  }
  const matrix = qrMatrix(layout.qrText, options.errorCorrection ?? 'M');
  const block = textBlock(layout, width, scale, 3);
  const px = modulePixels(matrix, width, height - block.height);
  if (px === 0) {
    throw new QrvendError(
      ErrorCodes.DISPLAY_QR_TOO_LONG,
      `a QR code of ${matrix.size}x${matrix.size} modules (${Buffer.byteLength(layout.qrText)} bytes of text) does not fit a ${width}x${height} display`,
      { hint: 'shorten the text or use a larger display' },
    );
  }
  const side = (matrix.size + 2 * QUIET_ZONE) * px;
  const top = Math.floor((height - side - block.height) / 2);
  drawQr(frame, matrix, { x: 0, y: top, width, height: side }, Colors.black, Colors.white);
  drawBlock(frame, block, top + side);
  return {
    qr: { x: Math.floor((width - side) / 2), y: top, side, modulePixels: px, version: matrix.version },
    text: block.rows.map((r) => r.text),
  };
}

/** Render a screen as it looks at `nowMs` (the dynamic QR countdown depends on it). */
export function renderScreen(frame: Frame, screen: Screen, nowMs: number, options: RenderOptions = {}): RenderResult {
  return renderLayout(frame, screenLayout(screen, nowMs), options);
}
