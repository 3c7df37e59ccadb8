/** The screen, the two payment flows' settings and the catalog (docs/display.md, docs/payments.md). */
import { z } from 'zod';
import { LANGUAGES } from '../languages.js';
import { int, text, AbsolutePath, Hex, isSupportedLocale, CatalogItem } from './primitives.js';

export const DisplaySection = z.strictObject({
  /** Framebuffer device, e.g. /dev/fb0; null = none. */
  framebuffer: AbsolutePath.nullable(),
  /** PNG file rewritten on every screen change (headless machines, diagnostics); null = none. */
  png: AbsolutePath.nullable(),
  /** Also draw screens as text on the terminal (demo, technicians). */
  terminal: z.boolean(),
  /** Size of the PNG when there is no framebuffer to take it from. */
  width: int(64, 8192),
  height: int(64, 8192),
  /** Language of every consumer-facing word (src/display/catalog). */
  language: z.enum(LANGUAGES).default('en'),
  /** BCP 47 locale for amounts (e.g. de-AT); null = the language's usual one. */
  locale: z
    .string()
    .max(35)
    .refine((tag) => isSupportedLocale(tag), 'display.locale must be a BCP 47 locale this Node knows, e.g. de-DE')
    .nullable()
    .default(null),
  /**
   * How long the reader may stay not enabled (at a start, before the VMC enables it; or when
   * the VMC disables it) with a neutral "One moment" screen before "Out of order" shows.
   */
  readerGraceS: int(0, 600).default(30),
  /** Panel mounted turned by this many degrees clockwise. */
  rotate: z.union([z.literal(0), z.literal(90), z.literal(180), z.literal(270)]).default(0),
  /** Operator logo on the idle screen (PNG or SVG file); null = none. */
  logo: z.string().min(1).max(4096).nullable().default(null),
  /** Receipt QR on the thank-you screen: a URL with {txId}; null = no receipt QR. */
  receiptUrl: z
    .string()
    .min(1)
    .max(1024)
    .refine((u) => u.includes('{txId}'), 'display.receiptUrl must contain {txId}')
    .nullable()
    .default(null),
  /** Colours as #rrggbb (the QR itself is always black on white). */
  colors: z
    .strictObject({
      background: Hex.default('#ffffff'),
      text: Hex.default('#1a1a1a'),
      accent: Hex.default('#0a7d32'),
      error: Hex.default('#c62828'),
      muted: Hex.default('#5f6368'),
    })
    .default({ background: '#ffffff', text: '#1a1a1a', accent: '#0a7d32', error: '#c62828', muted: '#5f6368' }),
});

export const StaticQrSection = z.strictObject({
  /** Amount requested by Authorization (capped by the consumer's Balance when given). */
  preauthAmount: z.number().positive().max(1_000_000),
  /**
   * true: the Authorization carries AgeLimitation = the highest catalog ageLimit, so an approval
   * vouches for every item; false: age-restricted items are denied inside static QR sessions.
   */
  verifyAge: z.boolean(),
});

export const DynamicQrSection = z.strictObject({
  /** Give up on a dynamic QR payment after this long; must be below mdb.maxResponseTimeS. */
  paymentTimeoutMs: int(1_000, 255_000),
  pollIntervalMs: int(100, 60_000),
  /** GenerateQR ChannelId, when the provider assigned one. */
  channelId: z.string().nullable(),
});

/** Product catalog by MDB item number. */
export const CatalogSection = z.record(z.string().regex(/^\d{1,5}$/, 'catalog keys are MDB item numbers'), CatalogItem);
