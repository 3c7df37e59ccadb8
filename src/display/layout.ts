/**
 * What each screen says: a Screen (src/ipc/messages.ts) becomes a Layout, a small description of
 * a QR code, a big headline and a few lines of text. Pure: the countdown takes the time as input.
 */
import type { Screen } from '../ipc/messages.js';
import { Colors, type Rgb } from './frame.js';

export interface Layout {
  /** Text to encode as a QR code, or null for a screen without one. */
  qrText: string | null;
  /** The big line: an amount or a verdict. */
  headline: string | null;
  headlineColor: Rgb;
  /** Smaller lines under the headline (wrapped to the screen when drawn). */
  lines: string[];
}

/** Currencies whose sign the built-in font can draw; others are shown by their ISO code. */
const PREFIX_SIGNS: Record<string, string> = { EUR: '\u20ac' };

/** "€1.50" for EUR, "1.50 USD" for currencies without a sign in the font. */
export function formatAmount(amount: number, currencyCode: string, decimalPlaces: number): string {
  const digits = Math.max(0, Math.min(3, Math.trunc(decimalPlaces)));
  const value = amount.toFixed(digits);
  const sign = PREFIX_SIGNS[currencyCode];
  return sign === undefined ? `${value} ${currencyCode}` : `${sign}${value}`;
}

/** Whole seconds left until `expiresAtMs`, never negative. */
export function secondsLeft(expiresAtMs: number, nowMs: number): number {
  return Math.max(0, Math.ceil((expiresAtMs - nowMs) / 1000));
}

export function screenLayout(screen: Screen, nowMs: number): Layout {
  const plain = { headlineColor: Colors.black as Rgb };
  switch (screen.kind) {
    case 'idle':
      return { ...plain, qrText: screen.qrText, headline: screen.message || 'Scan to pay', lines: [] };
    case 'dynamic-qr':
      return {
        ...plain,
        qrText: screen.qrText,
        headline: formatAmount(screen.amount, screen.currencyCode, screen.decimalPlaces),
        lines: ['Scan to pay', `${secondsLeft(screen.expiresAtMs, nowMs)} s left`],
      };
    case 'session':
      return {
        ...plain,
        qrText: null,
        headline: formatAmount(screen.amount, screen.currencyCode, screen.decimalPlaces),
        lines: screen.message ? [screen.message] : [],
      };
    case 'approved': {
      const lines = screen.amount === null ? [] : [formatAmount(screen.amount, screen.currencyCode, screen.decimalPlaces)];
      if (screen.message) lines.push(screen.message);
      return { qrText: null, headline: 'Approved', headlineColor: Colors.green, lines };
    }
    case 'declined':
      return { qrText: null, headline: 'Declined', headlineColor: Colors.red, lines: screen.reason ? [screen.reason] : [] };
    case 'message':
      return { ...plain, qrText: null, headline: screen.title, lines: screen.message ? [screen.message] : [] };
    case 'out-of-order':
      return { qrText: null, headline: 'Out of order', headlineColor: Colors.red, lines: screen.reason ? [screen.reason] : [] };
  }
}

/** Does this screen change by itself over time (the countdown)? */
export function isTimed(screen: Screen): boolean {
  return screen.kind === 'dynamic-qr';
}

/**
 * Milliseconds until the screen looks different (the countdown's next second), or null when it
 * will not change by itself any more. Redrawing exactly then keeps the number honest.
 */
export function nextChangeInMs(screen: Screen, nowMs: number): number | null {
  if (screen.kind !== 'dynamic-qr') return null;
  const remaining = screen.expiresAtMs - nowMs;
  if (remaining <= 0) return null;
  return (remaining % 1000 || 1000) + 1;
}

/** The idle screen: the machine's static QR (machine.uniQr) and "Scan to pay". */
export function idleScreen(uniQr: string, message = 'Scan to pay'): Screen {
  return { kind: 'idle', qrText: uniQr, message };
}
