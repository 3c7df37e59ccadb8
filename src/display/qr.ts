/**
 * QR codes: the module matrix from the `qrcode` package, sized to a box (largest whole number of
 * pixels per module with a 4-module quiet zone), and drawn into a frame row span by row span.
 */
import QRCode from 'qrcode';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { fillRect, pixelValue, repeatRowSpan, type Frame, type Rgb } from './frame.js';

export type ErrorCorrection = 'L' | 'M' | 'Q' | 'H';

/** The quiet zone the QR specification asks for around the symbol, in modules. */
export const QUIET_ZONE = 4;

export interface QrMatrix {
  text: string;
  /** Modules per side (without the quiet zone). */
  size: number;
  /** size * size cells, row-major, 1 = dark. */
  modules: Uint8Array;
  version: number;
  errorCorrection: ErrorCorrection;
}

// The countdown redraws the same code every second; keep the last few matrices.
const cache = new Map<string, QrMatrix>();
const CACHE_SIZE = 8;

/** Encode text; throws DISPLAY_QR_TOO_LONG when it does not fit any QR version. */
export function qrMatrix(text: string, errorCorrection: ErrorCorrection = 'M'): QrMatrix {
  const key = `${errorCorrection}\u0000${text}`;
  const hit = cache.get(key);
  if (hit) return hit;
  if (text.length === 0)
    throw new QrvendError(ErrorCodes.DISPLAY_QR_TOO_LONG, 'the QR text is empty', { hint: 'give the text to encode' });
  let qr: QRCode.QRCode;
  try {
    qr = QRCode.create(text, { errorCorrectionLevel: errorCorrection });
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.DISPLAY_QR_TOO_LONG,
      `the QR text (${Buffer.byteLength(text)} bytes) is too long for a QR code at error correction ${errorCorrection}`,
      { hint: 'shorten the text; a QR code holds at most about 2,300 bytes at level M', cause: err },
    );
  }
  const matrix: QrMatrix = {
    text,
    size: qr.modules.size,
    modules: Uint8Array.from(qr.modules.data),
    version: qr.version,
    errorCorrection,
  };
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(key, matrix);
  return matrix;
}

/** Pixels per module for the largest QR (with quiet zone) that fits a box; 0 = does not fit. */
export function modulePixels(matrix: QrMatrix, boxWidth: number, boxHeight: number): number {
  const span = matrix.size + 2 * QUIET_ZONE;
  return Math.max(0, Math.floor(Math.min(boxWidth, boxHeight) / span));
}

/**
 * Draw the code centred in a box: quiet zone in `light`, modules in `dark`. Returns the side of
 * the drawn square (quiet zone included) in pixels, 0 when it does not fit.
 */
export function drawQr(
  frame: Frame,
  matrix: QrMatrix,
  box: { x: number; y: number; width: number; height: number },
  dark: Rgb,
  light: Rgb,
): number {
  const px = modulePixels(matrix, box.width, box.height);
  if (px === 0) return 0;
  const side = (matrix.size + 2 * QUIET_ZONE) * px;
  const left = box.x + Math.floor((box.width - side) / 2);
  const top = box.y + Math.floor((box.height - side) / 2);
  fillRect(frame, left, top, side, side, light);
  const darkValue = pixelValue(frame.format, dark);
  const { pixels, rowPixels } = frame;
  const { size, modules } = matrix;
  const originX = left + QUIET_ZONE * px;
  const originY = top + QUIET_ZONE * px;
  for (let r = 0; r < size; r++) {
    const y = originY + r * px;
    if (y < 0 || y >= frame.height) continue;
    const rowStart = y * rowPixels;
    // Runs of dark modules become one fill each; the other px-1 rows are copies of this one.
    let c = 0;
    while (c < size) {
      if (modules[r * size + c] === 0) {
        c++;
        continue;
      }
      const runStart = c;
      while (c < size && modules[r * size + c] === 1) c++;
      const x0 = Math.max(0, originX + runStart * px);
      const x1 = Math.min(frame.width, originX + c * px);
      if (x1 > x0) pixels.fill(darkValue, rowStart + x0, rowStart + x1);
    }
    repeatRowSpan(frame, originX, y, size * px, px - 1);
  }
  return side;
}
