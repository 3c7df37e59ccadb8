import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createFrame, pixelValue, type FrameGeometry } from '../../src/display/frame.js';
import {
  defaultLayoutContext,
  formatAmount,
  idleScreen,
  nextChangeInMs,
  screenLayout,
  secondsLeft,
} from '../../src/display/layout.js';
import { qrMatrix, QUIET_ZONE } from '../../src/display/qr.js';
import { redrawCountdown, renderLayout, renderScreen } from '../../src/display/render.js';
import { isQrvendError } from '../../src/core/errors.js';
import type { Screen } from '../../src/ipc/messages.js';
import { decodeFrame, QR_TEXTS } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const G800: FrameGeometry = { width: 800, height: 480, stride: 3200, format: 'xrgb8888' };
const NOW = 1_700_000_000_000;
const T = { timeout: TEST_DEADLINE_MS };
const dynamic = (over: Partial<Extract<Screen, { kind: 'dynamic-qr' }>> = {}): Screen => ({
  kind: 'dynamic-qr',
  qrText: QR_TEXTS.url,
  amount: 1.5,
  currencyCode: 'EUR',
  decimalPlaces: 2,
  item: null,
  expiresAtMs: NOW + 41_200,
  ...over,
});

describe('layout of each screen', () => {
  it('idle shows the machine QR and "Scan to pay"', T, () => {
    const layout = screenLayout(idleScreen('QRVEND-0001'), NOW);
    assert.equal(layout.qrText, 'QRVEND-0001');
    assert.equal(layout.headline, 'Scan to pay');
  });

  it('dynamic QR shows the amount, the product from the catalog and the seconds left, rounded up', T, () => {
    const ctx = defaultLayoutContext({
      catalog: { '7': { name: 'Cola', names: { de: 'Cola-Dose' } } },
      shownAtMs: NOW,
    });
    const layout = screenLayout(dynamic({ item: 7 }), NOW, ctx);
    assert.equal(layout.headline, '\u20ac1.50');
    assert.equal(layout.title, 'Cola');
    assert.equal(layout.countdown?.text, '42 s left');
    assert.equal(layout.countdown?.fraction, 1);
    assert.equal(screenLayout(dynamic({ item: 7 }), NOW, { ...ctx, language: 'de' }).title, 'Cola-Dose');
    assert.equal(screenLayout(dynamic({ item: 8 }), NOW, ctx).title, 'Item 8');
    const later = screenLayout(dynamic(), NOW + 20_600, ctx);
    assert.ok(Math.abs(later.countdown!.fraction - 0.5) < 1e-9, 'half the time left');
    assert.equal(screenLayout(dynamic(), NOW + 60_000, ctx).countdown?.text, '0 s left');
  });

  it('the countdown changes exactly when the shown second does', T, () => {
    const screen = dynamic();
    const expires = NOW + 41_200;
    const wait = nextChangeInMs(screen, NOW)!;
    assert.equal(secondsLeft(expires, NOW + wait - 2), 42);
    assert.equal(secondsLeft(expires, NOW + wait), 41);
    assert.equal(nextChangeInMs(screen, NOW + 41_200), null);
    assert.equal(nextChangeInMs(idleScreen('x'), NOW), null);
  });

  it('formats amounts for the locale and currency (Intl, full ICU)', T, () => {
    assert.equal(formatAmount(1.5, 'EUR', 2, 'en-GB'), '\u20ac1.50');
    assert.equal(formatAmount(1.5, 'EUR', 2, 'de-DE'), '1,50\u00a0\u20ac');
    assert.equal(formatAmount(1.5, 'GBP', 2, 'en-GB'), '\u00a31.50');
    assert.equal(formatAmount(150, 'JPY', 0, 'ja-JP'), '\uffe5150');
    assert.equal(formatAmount(1234.5, 'PLN', 2, 'pl-PL'), '1234,50\u00a0z\u0142');
    assert.equal(formatAmount(1.5, 'BHD', 3, 'en-GB'), 'BHD\u00a01.500');
  });

  it('verdict screens say why in the chosen language, with the code for support', T, () => {
    const de = defaultLayoutContext({ language: 'de' });
    const declined = screenLayout({ kind: 'declined', reason: 'insufficient-funds', code: 1 }, NOW, de);
    assert.deepEqual(
      [declined.headline, ...declined.lines, declined.note],
      ['Zahlung nicht erfolgt', 'Ihr Guthaben reicht nicht aus', 'Code 1'],
    );
    const broken = screenLayout({ kind: 'out-of-order', reason: 'reader-offline', code: 'E-RDR-OFF' }, NOW);
    assert.deepEqual(
      [broken.headline, ...broken.lines, broken.note],
      ['Out of order', 'The payment reader is offline', 'Code E-RDR-OFF'],
    );
    const session = screenLayout({ kind: 'session', amount: 5, currencyCode: 'EUR', decimalPlaces: 2 }, NOW, de);
    assert.deepEqual(
      [session.qrText, session.title, session.headline, ...session.lines],
      [null, 'Ihr Guthaben', '5,00\u00a0\u20ac', 'Bitte wählen Sie ein Produkt'],
    );
  });

  it('the thank-you screen carries a receipt QR only when display.receiptUrl is set', T, () => {
    const screen: Screen = { kind: 'thank-you', amount: 2, currencyCode: 'EUR', decimalPlaces: 2, txId: 'TX 1/2' };
    assert.equal(screenLayout(screen, NOW).qrText, null);
    const withReceipt = screenLayout(screen, NOW, defaultLayoutContext({ receiptUrl: 'https://r.example/{txId}' }));
    assert.equal(withReceipt.qrText, 'https://r.example/TX%201%2F2');
    assert.ok(withReceipt.lines.includes('Scan for your receipt'));
  });
});

describe('rendering', () => {
  it('every QR screen decodes to its text', T, () => {
    for (const screen of [idleScreen(QR_TEXTS.short), dynamic()]) {
      const frame = createFrame(G800);
      const result = renderScreen(frame, screen, NOW);
      assert.ok(result.qr);
      assert.equal(decodeFrame(frame), (screen as { qrText: string }).qrText);
    }
  });

  it('uses the largest whole module size that fits, with a white quiet zone and the text beside it', T, () => {
    const frame = createFrame(G800);
    const result = renderScreen(frame, idleScreen(QR_TEXTS.short), NOW);
    const span = qrMatrix(QR_TEXTS.short).size + 2 * QUIET_ZONE;
    assert.ok(result.qr);
    const { modulePixels, side, x, y } = result.qr;
    assert.equal(side, span * modulePixels);
    assert.equal(modulePixels, Math.floor(480 / span), 'the largest whole module size that fits the height');
    const at = (cx: number, cy: number) => frame.pixels[cy * frame.rowPixels + cx];
    assert.equal(at(x + 1, y + 1), pixelValue('xrgb8888', 0xffffff));
    const finder = QUIET_ZONE * modulePixels;
    assert.equal(at(x + finder, y + finder), pixelValue('xrgb8888', 0x000000));
    for (const d of result.drawn) assert.ok(d.box.x >= x + side, `"${d.text}" is beside the code, not over it`);
  });

  it('a 512-character text still decodes on a 480x320 RGB565 panel with the amount shown', T, () => {
    const frame = createFrame({ width: 480, height: 320, stride: 960, format: 'rgb565' });
    const result = renderScreen(frame, dynamic({ qrText: QR_TEXTS.long, amount: 1, expiresAtMs: NOW + 5000 }), NOW);
    assert.ok(result.qr && result.qr.modulePixels >= 1);
    assert.equal(decodeFrame(frame), QR_TEXTS.long);
    assert.ok(result.text.includes('\u20ac1.00'));
  });

  it('refuses a QR that cannot fit the display, naming the size', T, () => {
    const frame = createFrame({ width: 64, height: 64, stride: 256, format: 'xrgb8888' });
    assert.throws(
      () => renderLayout(frame, { ...screenLayout(idleScreen(QR_TEXTS.long), NOW) }),
      (err) => isQrvendError(err, 'DISPLAY_QR_TOO_LONG') && /64x64/.test(err.message),
    );
  });

  it('refuses text too long for any QR code', T, () => {
    assert.throws(
      () => qrMatrix('x'.repeat(5000)),
      (err) => isQrvendError(err, 'DISPLAY_QR_TOO_LONG') && /5000 bytes/.test(err.message),
    );
  });

  it('wraps a long reason within the panel and draws the headline in the error colour', T, () => {
    const frame = createFrame({ width: 480, height: 320, stride: 1920, format: 'xrgb8888' });
    const result = renderScreen(frame, { kind: 'declined', reason: 'vend-failed-reversed', code: null }, NOW);
    assert.equal(result.qr, null);
    assert.equal(result.text[0], 'Payment not completed');
    assert.ok(result.text.length >= 3, 'the reason is wrapped onto more than one line');
    for (const d of result.drawn)
      assert.ok(d.width <= d.box.w && d.box.x >= 0 && d.box.x + d.box.w <= 480, `"${d.text}" fits`);
    assert.ok(frame.pixels.includes(pixelValue('xrgb8888', 0xc62828)));
  });

  it('the countdown redraw changes only its own rectangle', T, () => {
    const frame = createFrame(G800);
    const ctx = defaultLayoutContext({ shownAtMs: NOW });
    const result = renderScreen(frame, dynamic(), NOW, ctx);
    assert.ok(result.countdown);
    const before = Uint32Array.from(frame.pixels);
    const dirty = redrawCountdown(frame, result.countdown, screenLayout(dynamic(), NOW + 10_000, ctx));
    let changedInside = 0;
    for (let y = 0; y < frame.height; y++) {
      for (let x = 0; x < frame.width; x++) {
        const i = y * frame.rowPixels + x;
        if (before[i] === frame.pixels[i]) continue;
        const inside = x >= dirty.x && x < dirty.x + dirty.w && y >= dirty.y && y < dirty.y + dirty.h;
        assert.ok(inside, `pixel ${x},${y} changed outside the countdown's rectangle`);
        changedInside++;
      }
    }
    assert.ok(changedInside > 0, 'the countdown did change');
    // The same picture as a full render at that time.
    const full = createFrame(G800);
    renderScreen(full, dynamic(), NOW + 10_000, ctx);
    assert.deepEqual(Buffer.compare(full.data, frame.data), 0);
  });
});
