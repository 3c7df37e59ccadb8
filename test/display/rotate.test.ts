import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  createFrame,
  logicalGeometry,
  rotateInto,
  rotateRect,
  type FrameGeometry,
  type Rotation,
} from '../../src/display/frame.js';
import { renderScreen } from '../../src/display/render.js';
import { defaultLayoutContext, DEFAULT_PALETTE } from '../../src/display/layout.js';
import { pixelValue } from '../../src/display/frame.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const PANEL: FrameGeometry = { width: 6, height: 4, stride: 6 * 2, format: 'rgb565' };

describe('display.rotate', () => {
  for (const rotate of [0, 90, 180, 270] as Rotation[]) {
    it(
      `${rotate} degrees: every pixel and every rectangle lands where the panel turned back shows it upright`,
      T,
      () => {
        const logical = createFrame(logicalGeometry(PANEL, rotate));
        for (let i = 0; i < logical.pixels.length; i++) logical.pixels[i] = i + 1;
        const panel = createFrame(PANEL);
        rotateInto(panel, logical, rotate);
        const W = logical.width;
        const H = logical.height;
        for (let y = 0; y < H; y++) {
          for (let x = 0; x < W; x++) {
            // Turning the panel back by `rotate` degrees (counter-clockwise) brings (x, y) upright.
            const [px, py] =
              rotate === 0
                ? [x, y]
                : rotate === 90
                  ? [H - 1 - y, x]
                  : rotate === 180
                    ? [W - 1 - x, H - 1 - y]
                    : [y, W - 1 - x];
            assert.equal(
              panel.pixels[py * panel.rowPixels + px],
              logical.pixels[y * logical.rowPixels + x],
              `(${x},${y})`,
            );
          }
        }
        // A rectangle turned covers exactly the pixels its contents went to.
        const rect = { x: 1, y: 0, w: 2, h: 3 };
        const r = rotateRect(rect, logical, rotate);
        const marked = createFrame(PANEL);
        const source = createFrame(logicalGeometry(PANEL, rotate));
        for (let y = rect.y; y < rect.y + rect.h; y++)
          for (let x = rect.x; x < rect.x + rect.w; x++) source.pixels[y * source.rowPixels + x] = 7;
        rotateInto(marked, source, rotate, rect);
        for (let y = 0; y < PANEL.height; y++) {
          for (let x = 0; x < PANEL.width; x++) {
            const inside = x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
            assert.equal(marked.pixels[y * marked.rowPixels + x] === 7, inside, `panel (${x},${y}) at ${rotate}`);
          }
        }
      },
    );
  }
});

describe('display.colors', () => {
  it('the page, headline and bar take the operator colours; the QR stays black on white', T, () => {
    const frame = createFrame({ width: 800, height: 480, stride: 3200, format: 'xrgb8888' });
    const palette = { ...DEFAULT_PALETTE, background: 0x102040, accent: 0xffaa00 };
    const now = 1_700_000_000_000;
    const result = renderScreen(
      frame,
      {
        kind: 'dynamic-qr',
        qrText: 'colours',
        amount: 1,
        currencyCode: 'EUR',
        decimalPlaces: 2,
        item: null,
        expiresAtMs: now + 30_000,
      },
      now,
      defaultLayoutContext({ palette, shownAtMs: now }),
    );
    assert.equal(frame.pixels[479 * frame.rowPixels + 799], pixelValue('xrgb8888', 0x102040), 'background');
    const bar = result.countdown!.barBox;
    assert.equal(
      frame.pixels[(bar.y + 1) * frame.rowPixels + bar.x + 1],
      pixelValue('xrgb8888', 0xffaa00),
      'bar in the accent colour',
    );
    const qr = result.qr!;
    assert.equal(frame.pixels[(qr.y + 1) * frame.rowPixels + qr.x + 1], 0xffffff, 'quiet zone white');
  });
});
