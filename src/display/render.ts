/**
 * Drawing a Layout into a frame, scaled to the panel: every size is a share of the panel's short
 * side (one "unit" is 1/100 of it), not a pixel position. Landscape panels put the QR on one
 * side (the left, or the right for a right-to-left language) and the words on the other;
 * portrait panels put the QR on top. Whatever does not fit is shrunk until it does, so no
 * language runs off the panel. Pure apart from writing into the frame it is given.
 */
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { fillRect, type Frame, type Rgb } from './frame.js';
import type { Screen } from '../ipc/messages.js';
import { defaultLayoutContext, screenLayout, type Layout, type LayoutContext } from './layout.js';
import { drawQr, modulePixels, qrMatrix, QUIET_ZONE, type ErrorCorrection } from './qr.js';
import { lineHeight, TextPainter, type BlockItem, type Box, type CanvasImage, type TextStyle } from './text.js';

export interface RenderOptions {
  errorCorrection?: ErrorCorrection;
  /** The operator's logo, decoded once (display.logo); drawn where the layout asks for it. */
  logo?: CanvasImage | null;
}

export interface DrawnText {
  text: string;
  box: Box;
  /** Width the text takes (<= box.w when it fits). */
  width: number;
}

export interface CountdownPlace {
  textBox: Box;
  textStyle: TextStyle;
  barBox: Box;
}

export interface RenderResult {
  /** Where the QR code went (quiet zone included), or null for a screen without one. */
  qr: { x: number; y: number; side: number; modulePixels: number; version: number } | null;
  /** The text lines drawn, top first. */
  text: string[];
  drawn: DrawnText[];
  /** Where the countdown is, for redrawing only it (see redrawCountdown). */
  countdown: CountdownPlace | null;
}

let sharedPainter: TextPainter | null = null;

/** One painter per thread: it holds a Skia canvas and the registered fonts. */
export function painter(): TextPainter {
  sharedPainter ??= new TextPainter();
  return sharedPainter;
}

type Row =
  | { kind: 'text'; text: string; style: TextStyle; height: number }
  | { kind: 'logo'; height: number }
  | { kind: 'bar'; height: number }
  | { kind: 'gap'; height: number };

interface Plan {
  rows: Row[];
  height: number;
  countdownStyle: TextStyle | null;
  /** Some message needed more lines than it may have and was cut. */
  cut: boolean;
}

function planText(layout: Layout, width: number, unit: number, scale: number, withLogo: boolean, bodyScale = 1): Plan {
  const p = painter();
  const { palette, direction } = layout;
  const size = (u: number) => Math.max(10, Math.round(u * unit * scale));
  const body: TextStyle = { size: size(6 * bodyScale), bold: false, color: palette.text };
  const muted: TextStyle = { ...body, color: palette.muted };
  const small: TextStyle = { size: size(4.2), bold: false, color: palette.muted };
  const gap = Math.max(2, Math.round(2.5 * unit * scale));
  const rows: Row[] = [];
  let cut = false;
  // Wrapped lines, at most `max`; a message that needs more is cut, and the plan says so.
  const wrap = (t: string, style: TextStyle, max: number) => {
    const all = p.wrap(t, style, width, 99, direction);
    if (all.length <= max) return all;
    cut = true;
    return p.wrap(t, style, width, max, direction);
  };
  const text = (t: string, style: TextStyle) =>
    rows.push({ kind: 'text', text: t, style, height: lineHeight(style.size) });
  const space = () => rows.length > 0 && rows.push({ kind: 'gap', height: gap });

  if (withLogo) rows.push({ kind: 'logo', height: Math.round(16 * unit * scale) });
  if (layout.title) {
    space();
    for (const line of wrap(layout.title, muted, 2)) text(line, muted);
  }
  if (layout.headline) {
    space();
    // As large as fits on one line, down to the body size; then wrapped.
    let headline: TextStyle = { size: size(13), bold: true, color: layout.headlineColor };
    while (headline.size > body.size && p.measure(layout.headline, headline, direction) > width)
      headline = { ...headline, size: headline.size - 1 };
    for (const line of wrap(layout.headline, headline, 2)) text(line, headline);
  }
  if (layout.lines.length > 0) space();
  for (const line of layout.lines) for (const wrapped of wrap(line, body, 3)) text(wrapped, body);
  let countdownStyle: TextStyle | null = null;
  if (layout.countdown) {
    space();
    countdownStyle = muted;
    text(layout.countdown.text, muted);
    rows.push({ kind: 'bar', height: Math.max(4, Math.round(2 * unit * scale)) });
  }
  if (layout.note) {
    space();
    for (const line of wrap(layout.note, small, 1)) text(line, small);
  }
  return { rows, height: rows.reduce((h, r) => h + r.height, 0), countdownStyle, cut };
}

/** Track and fill of the countdown bar; the fill shrinks toward the reading start. */
function drawBar(frame: Frame, box: Box, fraction: number, layout: Layout): void {
  const track = mix(layout.palette.background, layout.palette.muted, 0.25);
  fillRect(frame, box.x, box.y, box.w, box.h, track);
  const filled = Math.round(box.w * Math.max(0, Math.min(1, fraction)));
  const x = layout.direction === 'rtl' ? box.x + box.w - filled : box.x;
  fillRect(frame, x, box.y, filled, box.h, layout.palette.accent);
}

function mix(a: Rgb, b: Rgb, t: number): Rgb {
  const ch = (shift: number) => Math.round(((a >> shift) & 0xff) * (1 - t) + ((b >> shift) & 0xff) * t) << shift;
  return ch(16) | ch(8) | ch(0);
}

export function renderLayout(frame: Frame, layout: Layout, options: RenderOptions = {}): RenderResult {
  const { width: W, height: H } = frame;
  const { palette } = layout;
  fillRect(frame, 0, 0, W, H, palette.background);
  const unit = Math.min(W, H) / 100;
  const margin = Math.round(4 * unit);
  const rtl = layout.direction === 'rtl';

  let qr: RenderResult['qr'] = null;
  let panel: Box = { x: margin, y: margin, w: W - 2 * margin, h: H - 2 * margin };
  if (layout.qrText !== null) {
    const matrix = qrMatrix(layout.qrText, options.errorCorrection ?? 'M');
    const landscape = W >= H * 1.15;
    const qrBox: Box = landscape
      ? { x: rtl ? W - H : 0, y: 0, w: H, h: H }
      : { x: 0, y: 0, w: W, h: Math.min(W, Math.floor(H * 0.6)) };
    const px = modulePixels(matrix, qrBox.w, qrBox.h);
    if (px === 0) {
      throw new QrvendError(
        ErrorCodes.DISPLAY_QR_TOO_LONG,
        `a QR code of ${matrix.size}x${matrix.size} modules (` +
          `${Buffer.byteLength(layout.qrText)} bytes of text) does not fit a ${W}x${H} display`,
        { hint: 'shorten the text or use a larger display' },
      );
    }
    const side = (matrix.size + 2 * QUIET_ZONE) * px;
    // The QR hugs its side of the panel: the quiet zone is its margin.
    const box: Box = landscape ? { ...qrBox, x: rtl ? W - side : 0, w: side } : { ...qrBox, h: side };
    drawQr(frame, matrix, { x: box.x, y: box.y, width: box.w, height: box.h }, 0x000000, 0xffffff);
    const left = landscape ? Math.floor((box.w - side) / 2) + box.x : Math.floor((W - side) / 2);
    qr = { x: left, y: box.y + Math.floor((box.h - side) / 2), side, modulePixels: px, version: matrix.version };
    panel = landscape
      ? {
          x: rtl ? margin : side + Math.round(margin / 2),
          y: margin,
          w: W - side - Math.round(1.5 * margin),
          h: H - 2 * margin,
        }
      : { x: margin, y: side, w: W - 2 * margin, h: H - side - margin };
  }

  const withLogo = layout.logo && options.logo != null;
  // A message too long for its lines first makes the smaller text smaller (down to 80 %), then
  // everything shrinks until the block fits.
  let plan = planText(layout, panel.w, unit, 1, withLogo);
  for (let body = 0.9; plan.cut && body >= 0.8; body -= 0.1) plan = planText(layout, panel.w, unit, 1, withLogo, body);
  for (let scale = 0.9; (plan.height > panel.h || plan.cut) && scale >= 0.4; scale -= 0.1)
    plan = planText(layout, panel.w, unit, scale, withLogo, 0.8);

  const items: BlockItem[] = [];
  const bars: Box[] = [];
  let countdown: CountdownPlace | null = null;
  const top = panel.y + Math.max(0, Math.floor((panel.h - plan.height) / 2));
  let y = top;
  let lastText: { box: Box; style: TextStyle } | null = null;
  for (const row of plan.rows) {
    const box: Box = { x: panel.x, y, w: panel.w, h: row.height };
    if (row.kind === 'text') {
      items.push({ kind: 'text', text: row.text, style: row.style, box });
      lastText = { box, style: row.style };
    } else if (row.kind === 'logo') {
      items.push({ kind: 'image', image: options.logo!, box });
    } else if (row.kind === 'bar' && lastText) {
      bars.push(box);
      countdown = { textBox: lastText.box, textStyle: lastText.style, barBox: box };
    }
    y += row.height;
  }
  const widths = painter().drawBlock(frame, items, palette.background, layout.direction);
  if (layout.countdown) for (const bar of bars) drawBar(frame, bar, layout.countdown.fraction, layout);
  const drawn: DrawnText[] = [];
  for (const item of items)
    if (item.kind === 'text') drawn.push({ text: item.text, box: item.box, width: widths[drawn.length]! });
  return { qr, text: drawn.map((d) => d.text), drawn, countdown };
}

/**
 * Redraw only the countdown (its words and bar) of a screen drawn by renderLayout, for the
 * once-a-second tick. Returns the rectangle that changed.
 */
export function redrawCountdown(frame: Frame, place: CountdownPlace, layout: Layout): Box {
  if (layout.countdown) {
    // The words are drawn only where they reach: clear the old, maybe longer, words first.
    const t = place.textBox;
    fillRect(frame, t.x, t.y, t.w, t.h, layout.palette.background);
    painter().draw(
      frame,
      layout.countdown.text,
      place.textStyle,
      place.textBox,
      layout.palette.background,
      layout.direction,
    );
    drawBar(frame, place.barBox, layout.countdown.fraction, layout);
  }
  const x = Math.min(place.textBox.x, place.barBox.x);
  const y = Math.min(place.textBox.y, place.barBox.y);
  const right = Math.max(place.textBox.x + place.textBox.w, place.barBox.x + place.barBox.w);
  const bottom = Math.max(place.textBox.y + place.textBox.h, place.barBox.y + place.barBox.h);
  return { x, y, w: right - x, h: bottom - y };
}

/** Render a screen as it looks at `nowMs` (the dynamic QR countdown depends on it). */
export function renderScreen(
  frame: Frame,
  screen: Screen,
  nowMs: number,
  context: LayoutContext = defaultLayoutContext(),
  options: RenderOptions = {},
): RenderResult {
  return renderLayout(frame, screenLayout(screen, nowMs, context), options);
}
