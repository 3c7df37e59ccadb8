/**
 * A screen as terminal text for technicians and the demo: the QR code with half-block characters
 * (two module rows per text line) and the headline and lines under it.
 *
 * With `ansi` the code is drawn black on an explicit white background, so it scans on light and
 * dark terminals alike. Without it (plain text, e.g. a log file) light modules are drawn as full
 * blocks, which scans on the usual light-on-dark terminal.
 */
import { isQrvendError } from '../../core/errors.js';
import type { Layout } from '../layout.js';
import { qrMatrix, QUIET_ZONE, type ErrorCorrection, type QrMatrix } from '../qr.js';

const ANSI_QR = '\u001b[30;47m'; // black on white
const ANSI_RESET = '\u001b[0m';

/** Half-block for a (top, bottom) pair of cells, 1 = ink. */
const INK_CHARS = [' ', '\u2584', '\u2580', '\u2588'] as const; // none, bottom, top, both

export function qrToHalfBlocks(matrix: QrMatrix, options: { ansi: boolean }): string[] {
  const span = matrix.size + 2 * QUIET_ZONE;
  const dark = (r: number, c: number): number => {
    const mr = r - QUIET_ZONE;
    const mc = c - QUIET_ZONE;
    if (mr < 0 || mc < 0 || mr >= matrix.size || mc >= matrix.size) return 0;
    return matrix.modules[mr * matrix.size + mc]!;
  };
  const lines: string[] = [];
  for (let r = 0; r < span; r += 2) {
    let line = '';
    for (let c = 0; c < span; c++) {
      let top = dark(r, c);
      let bottom = r + 1 < span ? dark(r + 1, c) : 0;
      // Plain mode paints the light modules; a missing last row counts as dark (not painted).
      if (!options.ansi) {
        top = 1 - top;
        bottom = r + 1 < span ? 1 - bottom : 0;
      }
      line += INK_CHARS[(top << 1) | bottom];
    }
    lines.push(options.ansi ? `${ANSI_QR}${line}${ANSI_RESET}` : line);
  }
  return lines;
}

function centre(text: string, width: number): string {
  const pad = Math.max(0, Math.floor((width - Array.from(text).length) / 2));
  return ' '.repeat(pad) + text;
}

/** What the terminal shows of a layout: the QR and the words, top to bottom. */
export type TerminalLayout = Pick<Layout, 'qrText' | 'headline' | 'lines'> &
  Partial<Pick<Layout, 'title' | 'countdown' | 'note'>>;

/** The whole screen as text ending in a newline. */
export function layoutToTerminal(
  layout: TerminalLayout,
  options: { ansi: boolean; errorCorrection?: ErrorCorrection },
): string {
  const out: string[] = [];
  let width = 40;
  if (layout.qrText !== null) {
    try {
      const matrix = qrMatrix(layout.qrText, options.errorCorrection ?? 'M');
      width = matrix.size + 2 * QUIET_ZONE;
      out.push(...qrToHalfBlocks(matrix, options));
    } catch (err) {
      if (!isQrvendError(err)) throw err;
      out.push(`[${err.describe()}]`);
    }
  }
  if (layout.title) out.push(centre(layout.title, width));
  if (layout.headline) out.push(centre(layout.headline, width));
  for (const line of layout.lines) out.push(centre(line, width));
  if (layout.countdown) out.push(centre(layout.countdown.text, width));
  if (layout.note) out.push(centre(layout.note, width));
  return `${out.join('\n')}\n`;
}
