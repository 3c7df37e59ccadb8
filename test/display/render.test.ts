import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Colors, createFrame, pixelValue, type FrameGeometry } from '../../src/display/frame.js';
import { formatAmount, idleScreen, nextChangeInMs, screenLayout, secondsLeft } from '../../src/display/layout.js';
import { qrMatrix, QUIET_ZONE } from '../../src/display/qr.js';
import { lineGap, renderLayout, renderScreen, textScale } from '../../src/display/render.js';
import { isQrvendError } from '../../src/core/errors.js';
import type { Screen } from '../../src/ipc/messages.js';
import { decodeFrame, QR_TEXTS } from './helpers.js';

const G800: FrameGeometry = { width: 800, height: 480, stride: 3200, format: 'xrgb8888' };
const NOW = 1_700_000_000_000;

describe('layout of each screen', () => {
  it('idle shows the machine QR and "Scan to pay"', () => {
    const layout = screenLayout(idleScreen('QRVEND-0001'), NOW);
    assert.equal(layout.qrText, 'QRVEND-0001');
    assert.equal(layout.headline, 'Scan to pay');
  });

  it('dynamic QR shows the amount and the seconds left, rounded up', () => {
    const screen: Screen = { kind: 'dynamic-qr', qrText: 'q', amount: 1.5, currencyCode: 'EUR', decimalPlaces: 2, expiresAtMs: NOW + 41_200 };
    const layout = screenLayout(screen, NOW);
    assert.equal(layout.headline, '\u20ac1.50');
    assert.deepEqual(layout.lines, ['Scan to pay', '42 s left']);
    assert.deepEqual(screenLayout(screen, NOW + 60_000).lines, ['Scan to pay', '0 s left']);
  });

  it('the countdown changes exactly when the shown second does', () => {
    const screen: Screen = { kind: 'dynamic-qr', qrText: 'q', amount: 1, currencyCode: 'EUR', decimalPlaces: 2, expiresAtMs: NOW + 41_200 };
    const wait = nextChangeInMs(screen, NOW)!;
    assert.equal(secondsLeft(screen.expiresAtMs, NOW + wait - 2), 42);
    assert.equal(secondsLeft(screen.expiresAtMs, NOW + wait), 41);
    assert.equal(nextChangeInMs(screen, NOW + 41_200), null);
    assert.equal(nextChangeInMs(idleScreen('x'), NOW), null);
  });

  it('formats amounts with the currency decimal places; the euro gets its sign', () => {
    assert.equal(formatAmount(2, 'EUR', 2), '\u20ac2.00');
    assert.equal(formatAmount(1234.5, 'USD', 2), '1234.50 USD');
    assert.equal(formatAmount(150, 'JPY', 0), '150 JPY');
    assert.equal(formatAmount(1.5, 'BHD', 3), '1.500 BHD');
  });

  it('verdict screens carry their reason', () => {
    assert.deepEqual(screenLayout({ kind: 'declined', reason: 'Insufficient funds' }, NOW).lines, ['Insufficient funds']);
    assert.equal(screenLayout({ kind: 'declined', reason: 'x' }, NOW).headline, 'Declined');
    assert.equal(screenLayout({ kind: 'out-of-order', reason: 'Reader offline' }, NOW).headline, 'Out of order');
    const approved = screenLayout({ kind: 'approved', amount: 1.2, currencyCode: 'EUR', decimalPlaces: 2, message: 'Take your product' }, NOW);
    assert.deepEqual([approved.headline, ...approved.lines], ['Approved', '\u20ac1.20', 'Take your product']);
    const session = screenLayout({ kind: 'session', amount: 5, currencyCode: 'EUR', decimalPlaces: 2, message: 'Select a product' }, NOW);
    assert.deepEqual([session.qrText, session.headline, ...session.lines], [null, '\u20ac5.00', 'Select a product']);
  });
});

describe('rendering', () => {
  const screens: Screen[] = [
    idleScreen(QR_TEXTS.short),
    { kind: 'dynamic-qr', qrText: QR_TEXTS.url, amount: 2.5, currencyCode: 'EUR', decimalPlaces: 2, expiresAtMs: NOW + 30_000 },
  ];
  for (const screen of screens) {
    it(`the ${screen.kind} screen's QR decodes to its text`, () => {
      const frame = createFrame(G800);
      const result = renderScreen(frame, screen, NOW);
      assert.ok(result.qr);
      assert.equal(decodeFrame(frame), (screen as { qrText: string }).qrText);
    });
  }

  it('uses the largest whole module size that fits, centred horizontally, with text under it', () => {
    const frame = createFrame(G800);
    const layout = { qrText: QR_TEXTS.short, headline: 'Scan to pay', headlineColor: Colors.black, lines: [] };
    const result = renderLayout(frame, layout);
    const span = qrMatrix(QR_TEXTS.short).size + 2 * QUIET_ZONE;
    assert.ok(result.qr);
    const { modulePixels, side, x, y } = result.qr;
    assert.equal(side, span * modulePixels);
    assert.ok(Math.abs(x + side / 2 - 400) <= 1, 'centred horizontally');
    // The quiet zone is white and the top-left finder's corner module is dark.
    const at = (cx: number, cy: number) => frame.pixels[cy * frame.rowPixels + cx];
    assert.equal(at(x + 1, y + 1), pixelValue('xrgb8888', Colors.white));
    const finder = QUIET_ZONE * modulePixels;
    assert.equal(at(x + finder, y + finder), pixelValue('xrgb8888', Colors.black));
    // The text sits under the code; one more pixel per module would leave no room for it.
    let lastInkRow = -1;
    for (let row = y + side; row < 480; row++) for (let col = 0; col < 800; col++) if (at(col, row) === 0) lastInkRow = row;
    assert.ok(lastInkRow > y + side, 'text under the QR code');
    const textSpan = lastInkRow + 1 - (y + side);
    assert.ok(side + textSpan <= 480);
    // The headline is drawn at twice the text scale and keeps lineGap() below it as a margin.
    const margin = lineGap(2 * textScale(800, 480));
    assert.ok(side + textSpan + margin <= 480);
    assert.ok(span * (modulePixels + 1) + textSpan + margin > 480, `module size ${modulePixels} is the largest that fits`);
  });

  it('a 512-character text still decodes on a 480x320 RGB565 screen with the amount shown', () => {
    const frame = createFrame({ width: 480, height: 320, stride: 960, format: 'rgb565' });
    const screen: Screen = { kind: 'dynamic-qr', qrText: QR_TEXTS.long, amount: 1, currencyCode: 'EUR', decimalPlaces: 2, expiresAtMs: NOW + 5000 };
    const result = renderScreen(frame, screen, NOW);
    assert.ok(result.qr && result.qr.modulePixels >= 1);
    assert.equal(decodeFrame(frame), QR_TEXTS.long);
    assert.deepEqual(result.text, ['\u20ac1.00', 'Scan to pay', '5 s left']);
  });

  it('refuses a QR that cannot fit the display, naming the size', () => {
    const frame = createFrame({ width: 64, height: 64, stride: 256, format: 'xrgb8888' });
    assert.throws(
      () => renderLayout(frame, { qrText: QR_TEXTS.long, headline: null, headlineColor: 0, lines: [] }),
      (err) => isQrvendError(err, 'DISPLAY_QR_TOO_LONG') && /64x64/.test(err.message),
    );
  });

  it('refuses text too long for any QR code', () => {
    assert.throws(() => qrMatrix('x'.repeat(5000)), (err) => isQrvendError(err, 'DISPLAY_QR_TOO_LONG') && /5000 bytes/.test(err.message));
  });

  it('draws text-only screens with their headline and wrapped reason', () => {
    const frame = createFrame({ width: 480, height: 320, stride: 1920, format: 'xrgb8888' });
    const reason = 'The payment service did not answer in time, please try again in a moment';
    const result = renderScreen(frame, { kind: 'declined', reason }, NOW);
    assert.equal(result.qr, null);
    assert.equal(result.text[0], 'Declined');
    assert.equal(result.text.slice(1).join(' '), reason);
    // The headline is red.
    const red = pixelValue('xrgb8888', Colors.red);
    assert.ok(frame.pixels.includes(red));
  });
});
