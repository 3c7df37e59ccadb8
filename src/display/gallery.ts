/**
 * Every screen of docs/decisions/consumer-display.md with sample facts, in every language, at a given panel size:
 * what `npm run screens` writes as PNGs and what the display tests check (QR decodes, text fits).
 */
import type { Screen } from '../ipc/messages.js';
import { LANGUAGES, type Language } from './catalog/index.js';
import { createFrame, logicalGeometry, rotateInto, type Frame, type FrameGeometry, type Rotation } from './frame.js';
import { DEFAULT_PALETTE, defaultLayoutContext, screenLayout, type Layout, type LayoutContext } from './layout.js';
import { renderLayout, type RenderResult } from './render.js';

/** The sample machine: a UniQR, a 45 s dynamic QR 17 s in, a receipt URL and a small catalog. */
export const SAMPLE_NOW = 1_700_000_017_000;
const SHOWN_AT = SAMPLE_NOW - 17_000;
export const SAMPLE_UNIQR = 'https://pay.example.com/uniqr/VM-0042';
export const SAMPLE_DYNAMIC_QR =
  '00020101021226860014com.example.pay0136000000000000000000000000000000420208QRVEND010311VENDING-' +
  '0015204581453039785405001.505802DE5913QRVEND DEMO 16005BERLIN6304ABCD';
export const SAMPLE_RECEIPT_URL = 'https://receipts.example.com/r/{txId}';
export const SAMPLE_TX_ID = 'TX-20261123-000042';

export const SAMPLE_CATALOG: LayoutContext['catalog'] = {
  '12': {
    name: 'Sparkling water 0.5 l',
    names: {
      de: 'Mineralwasser 0,5 l',
      fr: 'Eau gazeuse 0,5 l',
      es: 'Agua con gas 0,5 l',
      it: 'Acqua frizzante 0,5 l',
      nl: 'Bruisend water 0,5 l',
      pl: 'Woda gazowana 0,5 l',
      he: 'מים מוגזים 0.5 ל׳',
    },
  },
};

export const SAMPLE_SCREENS: readonly { name: string; screen: Screen }[] = [
  { name: 'idle', screen: { kind: 'idle', qrText: SAMPLE_UNIQR } },
  { name: 'waiting', screen: { kind: 'waiting' } },
  {
    name: 'dynamic-qr',
    screen: {
      kind: 'dynamic-qr',
      qrText: SAMPLE_DYNAMIC_QR,
      amount: 1.5,
      currencyCode: 'EUR',
      decimalPlaces: 2,
      item: 12,
      expiresAtMs: SHOWN_AT + 45_000,
    },
  },
  { name: 'authorizing', screen: { kind: 'authorizing' } },
  { name: 'session', screen: { kind: 'session', amount: 5, currencyCode: 'EUR', decimalPlaces: 2 } },
  { name: 'vending', screen: { kind: 'vending', amount: 1.5, currencyCode: 'EUR', decimalPlaces: 2, item: 12 } },
  {
    name: 'thank-you',
    screen: { kind: 'thank-you', amount: 1.5, currencyCode: 'EUR', decimalPlaces: 2, txId: SAMPLE_TX_ID },
  },
  { name: 'session-ended', screen: { kind: 'session-ended' } },
  { name: 'declined', screen: { kind: 'declined', reason: 'insufficient-funds', code: 1 } },
  { name: 'declined-reversed', screen: { kind: 'declined', reason: 'vend-failed-reversed', code: null } },
  { name: 'out-of-order', screen: { kind: 'out-of-order', reason: 'reader-offline', code: 'E-RDR-OFF' } },
];

export interface GalleryPicture {
  name: string;
  language: Language;
  screen: Screen;
  layout: Layout;
  /** The upright picture (what the render result's coordinates refer to). */
  frame: Frame;
  /** The panel's frame (turned when rotate != 0). */
  panel: Frame;
  result: RenderResult;
}

export function sampleContext(language: Language): LayoutContext {
  return defaultLayoutContext({
    language,
    palette: DEFAULT_PALETTE,
    catalog: SAMPLE_CATALOG,
    receiptUrl: SAMPLE_RECEIPT_URL,
    shownAtMs: SHOWN_AT,
  });
}

/** Render one sample screen in one language on a panel. */
export function renderSample(
  sample: { name: string; screen: Screen },
  language: Language,
  panel: FrameGeometry,
  rotate: Rotation = 0,
): GalleryPicture {
  const layout = screenLayout(sample.screen, SAMPLE_NOW, sampleContext(language));
  const panelFrame = createFrame(panel);
  const frame = rotate === 0 ? panelFrame : createFrame(logicalGeometry(panel, rotate));
  const result = renderLayout(frame, layout);
  if (rotate !== 0) rotateInto(panelFrame, frame, rotate);
  return { name: sample.name, language, screen: sample.screen, layout, frame, panel: panelFrame, result };
}

/** Every sample screen in every language on one panel. */
export function* gallery(panel: FrameGeometry, rotate: Rotation = 0): Generator<GalleryPicture> {
  for (const language of LANGUAGES)
    for (const sample of SAMPLE_SCREENS) yield renderSample(sample, language, panel, rotate);
}
