/**
 * `qrvend qr TEXT`: render one QR code on demand, for technicians (print a test code on the
 * display, produce a sticker image) and for checking a display. Runs on the CLI's own thread: it
 * is a one-shot command, not the daemon.
 */
import { loadConfig, warnRejectedOverlay } from '../config/load.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { createFrame } from './frame.js';
import { layoutContextOf } from './context.js';
import { DEFAULT_LOCALE } from './catalog/index.js';
import { formatAmount, screenLayout, type Layout, type LayoutContext } from './layout.js';
import { openFramebuffer } from './outputs/framebuffer.js';
import { writePngAtomic } from './outputs/png.js';
import { layoutToTerminal } from './outputs/terminal.js';
import { qrMatrix, type ErrorCorrection } from './qr.js';
import { renderLayout } from './render.js';

export interface QrCommandOptions {
  png?: string;
  fb?: string;
  terminal?: boolean;
  amount?: string;
  message?: string;
  width?: string;
  height?: string;
  currency?: string;
  decimals?: string;
  errorCorrection?: string;
  sysfs?: string;
  config?: string;
}

function usage(message: string): QrvendError {
  return new QrvendError(ErrorCodes.CLI_USAGE, message, { hint: 'see qrvend qr --help' });
}

function intOption(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw usage(`--${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

/** What to draw, from the command line (exported for tests). */
export function qrCommandLayout(
  text: string,
  opts: QrCommandOptions,
  currencyCode: string,
  decimalPlaces: number,
  context: LayoutContext,
): Layout {
  let headline: string | null = null;
  if (opts.amount !== undefined) {
    const amount = Number(opts.amount);
    if (opts.amount.trim() === '' || !Number.isFinite(amount) || amount < 0)
      throw usage(`--amount must be a non-negative number such as 1.50, got "${opts.amount}"`);
    headline = formatAmount(amount, currencyCode, decimalPlaces, context.locale ?? DEFAULT_LOCALE[context.language]);
  }
  // The idle screen's look, with the technician's own words instead of the catalog's.
  return {
    ...screenLayout({ kind: 'idle', qrText: text }, 0, context),
    headline,
    lines: opts.message ? [opts.message] : [],
    logo: false,
  };
}

export function runQr(
  text: string,
  opts: QrCommandOptions,
  write: (s: string) => void = (s) => void process.stdout.write(s),
): void {
  const level = (opts.errorCorrection ?? 'M').toUpperCase();
  if (!['L', 'M', 'Q', 'H'].includes(level))
    throw usage(`--error-correction must be L, M, Q or H, got "${opts.errorCorrection}"`);
  const errorCorrection = level as ErrorCorrection;
  // Fail on the text before touching any output.
  qrMatrix(text, errorCorrection);

  const loaded = loadConfig({ file: opts.config });
  const { config } = loaded;
  warnRejectedOverlay(loaded.overlay);
  const currency = opts.currency ?? config.machine.currencyCode;
  if (!/^[A-Z]{3}$/.test(currency)) throw usage(`--currency must be an ISO 4217 code such as EUR, got "${currency}"`);
  const decimals = intOption('decimals', opts.decimals, config.machine.decimalPlaces, 0, 3);
  const layout = qrCommandLayout(text, opts, currency, decimals, layoutContextOf(config.display));

  if (opts.fb !== undefined) {
    const fb = openFramebuffer(opts.fb, opts.sysfs ?? '/sys');
    try {
      const frame = createFrame(fb.geometry);
      const result = renderLayout(frame, layout, { errorCorrection });
      fb.write(frame);
      write(
        `drew on ${opts.fb} (${frame.width}x${frame.height} ` +
          `${frame.format}, ${result.qr?.modulePixels} px per module)\n`,
      );
    } finally {
      fb.close();
    }
  }
  if (opts.png !== undefined) {
    const width = intOption('width', opts.width, config.display.width, 64, 8192);
    const height = intOption('height', opts.height, config.display.height, 64, 8192);
    const frame = createFrame({ width, height, stride: width * 4, format: 'xrgb8888' });
    const result = renderLayout(frame, layout, { errorCorrection });
    writePngAtomic(opts.png, frame);
    write(`wrote ${opts.png} (${width}x${height}, ${result.qr?.modulePixels} px per module)\n`);
  }
  if (opts.terminal || (opts.fb === undefined && opts.png === undefined)) {
    write(layoutToTerminal(layout, { ansi: process.stdout.isTTY === true, errorCorrection }));
  }
}
