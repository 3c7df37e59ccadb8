/**
 * What each screen says: a Screen (src/ipc/messages.ts) becomes a Layout in the consumer's
 * language: an optional QR code, a big headline, a few lines of text, a countdown and a small
 * note for the technician. Pure: the time and the wording context are inputs.
 */
import type { Screen } from '../ipc/messages.js';
import { DEFAULT_LOCALE, direction, translate, type Language } from './catalog/index.js';
import type { Rgb } from './frame.js';

export interface Palette {
  background: Rgb;
  text: Rgb;
  accent: Rgb;
  error: Rgb;
  muted: Rgb;
}

export const DEFAULT_PALETTE: Palette = {
  background: 0xffffff,
  text: 0x1a1a1a,
  accent: 0x0a7d32,
  error: 0xc62828,
  muted: 0x5f6368,
};

export interface Layout {
  /** Text to encode as a QR code, or null for a screen without one. */
  qrText: string | null;
  /** A smaller line above the headline (e.g. "Your credit"). */
  title: string | null;
  /** The big line: an amount or a verdict. */
  headline: string | null;
  headlineColor: Rgb;
  /** Lines under the headline (wrapped to the panel when drawn). */
  lines: string[];
  /** The dynamic QR's countdown: words and the share of the time left (1 = all, 0 = none). */
  countdown: { text: string; fraction: number } | null;
  /** A small muted line at the bottom (the technician's code). */
  note: string | null;
  /** Show the operator's logo (idle screen). */
  logo: boolean;
  direction: 'ltr' | 'rtl';
  palette: Palette;
}

/** What wording a layout needs beyond the screen itself. */
export interface LayoutContext {
  language: Language;
  /** BCP 47 locale for amounts; null = the language's usual one. */
  locale: string | null;
  palette: Palette;
  /** Product names by MDB item number (from the config catalog). */
  catalog: Readonly<Record<string, { name: string; names?: Partial<Record<Language, string>> }>>;
  /** display.receiptUrl with {txId}, or null. */
  receiptUrl: string | null;
  /** When the current screen went up (the countdown bar starts full then). */
  shownAtMs: number;
}

export function defaultLayoutContext(overrides: Partial<LayoutContext> = {}): LayoutContext {
  return {
    language: 'en',
    locale: null,
    palette: DEFAULT_PALETTE,
    catalog: {},
    receiptUrl: null,
    shownAtMs: 0,
    ...overrides,
  };
}

const formatters = new Map<string, Intl.NumberFormat>();

/** An amount as the locale writes it: "€1.50" (en-GB), "1,50 €" (de-DE), "¥150" (ja-JP). */
export function formatAmount(amount: number, currencyCode: string, decimalPlaces: number, locale = 'en-GB'): string {
  const digits = Math.max(0, Math.min(3, Math.trunc(decimalPlaces)));
  const key = `${locale}\u0000${currencyCode}\u0000${digits}`;
  let format = formatters.get(key);
  if (format === undefined) {
    format = new Intl.NumberFormat(locale, {
      style: 'currency',
      currency: currencyCode,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    });
    formatters.set(key, format);
  }
  return format.format(amount);
}

/** Whole seconds left until `expiresAtMs`, never negative. */
export function secondsLeft(expiresAtMs: number, nowMs: number): number {
  return Math.max(0, Math.ceil((expiresAtMs - nowMs) / 1000));
}

/** The product's name in the display language, else its catalog name, else "Item N". */
export function productName(ctx: LayoutContext, item: number | null): string | null {
  if (item === null) return null;
  const entry = ctx.catalog[String(item)];
  if (entry === undefined) return translate(ctx.language, 'item', { item });
  return entry.names?.[ctx.language] ?? entry.name;
}

type Translate = (key: Parameters<typeof translate>[1], values?: Record<string, string | number>) => string;
type Money = (s: { amount: number; currencyCode: string; decimalPlaces: number }) => string;

/** What every screen's layout starts from: the catalog's words, the locale's amounts, the blank layout. */
interface LayoutParts {
  t: Translate;
  money: Money;
  base: Layout;
}

function layoutParts(ctx: LayoutContext): LayoutParts {
  const t: Translate = (key, values) => translate(ctx.language, key, values);
  const locale = ctx.locale ?? DEFAULT_LOCALE[ctx.language];
  const money: Money = (s) => formatAmount(s.amount, s.currencyCode, s.decimalPlaces, locale);
  const { palette } = ctx;
  const base: Layout = {
    qrText: null,
    title: null,
    headline: null,
    headlineColor: palette.text,
    lines: [],
    countdown: null,
    note: null,
    logo: false,
    direction: direction(ctx.language),
    palette,
  };
  return { t, money, base };
}

function dynamicQrLayout(
  screen: Extract<Screen, { kind: 'dynamic-qr' }>,
  nowMs: number,
  ctx: LayoutContext,
  { t, money, base }: LayoutParts,
): Layout {
  const product = productName(ctx, screen.item);
  const total = Math.max(1, screen.expiresAtMs - Math.min(ctx.shownAtMs, nowMs));
  const fraction = Math.max(0, Math.min(1, (screen.expiresAtMs - nowMs) / total));
  return {
    ...base,
    qrText: screen.qrText,
    title: product,
    headline: money(screen),
    lines: [t('scanToPay')],
    countdown: { text: t('secondsLeft', { seconds: secondsLeft(screen.expiresAtMs, nowMs) }), fraction },
  };
}

function vendingLayout(
  screen: Extract<Screen, { kind: 'vending' }>,
  ctx: LayoutContext,
  { t, money, base }: LayoutParts,
): Layout {
  const product = productName(ctx, screen.item);
  const lines = [
    product,
    screen.amount === null ? null : money({ ...screen, amount: screen.amount }),
    t('vendingDetail'),
  ];
  return {
    ...base,
    headline: t('vendingTitle'),
    headlineColor: ctx.palette.accent,
    lines: lines.filter((l): l is string => l !== null),
  };
}

function thankYouLayout(
  screen: Extract<Screen, { kind: 'thank-you' }>,
  ctx: LayoutContext,
  { t, money, base }: LayoutParts,
): Layout {
  const receipt =
    ctx.receiptUrl !== null && screen.txId !== null
      ? ctx.receiptUrl.replaceAll('{txId}', encodeURIComponent(screen.txId))
      : null;
  const lines = [
    screen.amount === null ? null : money({ ...screen, amount: screen.amount }),
    t('thankYouDetail'),
    receipt === null ? null : t('receiptHint'),
  ];
  return {
    ...base,
    qrText: receipt,
    headline: t('thankYouTitle'),
    headlineColor: ctx.palette.accent,
    lines: lines.filter((l): l is string => l !== null),
  };
}

export function screenLayout(screen: Screen, nowMs: number, ctx: LayoutContext = defaultLayoutContext()): Layout {
  const parts = layoutParts(ctx);
  const { t, money, base } = parts;
  const { palette } = ctx;
  switch (screen.kind) {
    case 'idle':
      return { ...base, qrText: screen.qrText, headline: t('scanToPay'), lines: [t('scanHint')], logo: true };
    case 'dynamic-qr':
      return dynamicQrLayout(screen, nowMs, ctx, parts);
    case 'authorizing':
      return { ...base, headline: t('authorizingTitle'), lines: [t('authorizingDetail')] };
    case 'waiting':
      return { ...base, headline: t('waitingTitle') };
    case 'session':
      return { ...base, title: t('sessionTitle'), headline: money(screen), lines: [t('sessionDetail')] };
    case 'vending':
      return vendingLayout(screen, ctx, parts);
    case 'thank-you':
      return thankYouLayout(screen, ctx, parts);
    case 'session-ended':
      return { ...base, headline: t('sessionEndedTitle'), lines: [t('sessionEndedDetail')] };
    case 'declined':
      return {
        ...base,
        headline: t('declinedTitle'),
        headlineColor: palette.error,
        lines: [t(`decline.${screen.reason}`)],
        note: screen.code === null ? null : t('code', { code: screen.code }),
      };
    case 'out-of-order':
      return {
        ...base,
        headline: t('outOfOrderTitle'),
        headlineColor: palette.error,
        lines: [t(`outOfOrder.${screen.reason}`)],
        note: t('code', { code: screen.code }),
      };
  }
}

/** The screen shown instead of one that cannot be drawn (e.g. a QR too large for the panel). */
export function cannotShowLayout(ctx: LayoutContext): Layout {
  const t = (key: 'cannotShowTitle' | 'cannotShowDetail') => translate(ctx.language, key);
  return {
    ...screenLayout({ kind: 'session-ended' }, 0, ctx),
    headline: t('cannotShowTitle'),
    headlineColor: ctx.palette.error,
    lines: [t('cannotShowDetail')],
  };
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

export { idleScreen } from '../ipc/idle-screen.js';
