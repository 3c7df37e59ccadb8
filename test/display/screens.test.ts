/**
 * Every screen in every language on every panel size the README names: the QR decodes with an
 * independent decoder (jsQR), each line of text fits its box and the panel, and the countdown's
 * rectangle stays on the panel.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FrameGeometry } from '../../src/display/frame.js';
import { gallery, renderSample, SAMPLE_SCREENS } from '../../src/display/gallery.js';
import { decodeFrame } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const PANELS: (FrameGeometry & { rotate: 0 | 90 | 180 | 270 })[] = [
  { width: 800, height: 480, stride: 3200, format: 'xrgb8888', rotate: 0 },
  { width: 1024, height: 600, stride: 4096, format: 'xrgb8888', rotate: 0 },
  { width: 480, height: 320, stride: 960, format: 'rgb565', rotate: 0 },
  { width: 1920, height: 1080, stride: 7680, format: 'xrgb8888', rotate: 0 },
  { width: 800, height: 480, stride: 3200, format: 'xrgb8888', rotate: 90 },
];

describe('every screen, every language, every panel', () => {
  for (const panel of PANELS) {
    const label = `${panel.width}x${panel.height} ${panel.format} rotate ${panel.rotate}`;
    it(`${label}: text fits, QR codes are crisp and decode`, { timeout: 300_000 }, () => {
      let pictures = 0;
      for (const picture of gallery(panel, panel.rotate)) {
        pictures++;
        const { frame, result } = picture;
        const where = `${picture.name} in ${picture.language} on ${label}`;
        assert.ok(result.drawn.length > 0, `${where}: words drawn`);
        // Every message is drawn whole (wrapped at spaces, never cut short with an ellipsis).
        const shown = result.text.join(' ');
        for (const message of [
          picture.layout.title,
          picture.layout.headline,
          ...picture.layout.lines,
          picture.layout.countdown?.text,
          picture.layout.note,
        ]) {
          if (message)
            assert.ok(
              shown.includes(message),
              `${where}: "${message}" is not drawn whole (drawn: ${JSON.stringify(result.text)})`,
            );
        }
        for (const d of result.drawn) {
          assert.ok(d.width <= d.box.w, `${where}: "${d.text}" (${d.width}px) is wider than its ${d.box.w}px box`);
          assert.ok(
            d.box.x >= 0 && d.box.y >= 0 && d.box.x + d.box.w <= frame.width && d.box.y + d.box.h <= frame.height,
            `${where}: "${d.text}" runs off the panel`,
          );
        }
        if (result.countdown) {
          const b = result.countdown.barBox;
          assert.ok(
            b.x >= 0 && b.y >= 0 && b.x + b.w <= frame.width && b.y + b.h <= frame.height,
            `${where}: countdown bar off the panel`,
          );
        }
        if (picture.layout.qrText !== null) {
          assert.ok(result.qr && result.qr.modulePixels >= 4, `${where}: at least 4 px per module`);
          // Decoding is slow on big panels: English and Hebrew (QR on the other side) suffice for the decode.
          if (picture.language === 'en' || picture.language === 'he')
            assert.equal(decodeFrame(picture.panel), picture.layout.qrText, `${where}: QR decodes`);
        }
      }
      assert.equal(pictures, 8 * SAMPLE_SCREENS.length);
    });
  }

  it(
    'a turned panel holds the upright picture turned: the panel frame is the logical one rotated',
    { timeout: TEST_DEADLINE_MS },
    () => {
      const panel: FrameGeometry = { width: 480, height: 320, stride: 1920, format: 'xrgb8888' };
      const upright = renderSample(SAMPLE_SCREENS[0]!, 'en', panel, 0);
      const turned = renderSample(SAMPLE_SCREENS[0]!, 'en', panel, 90);
      assert.equal(turned.frame.width, 320);
      assert.equal(turned.frame.height, 480);
      // Portrait layout: the QR on top, full width.
      assert.equal(turned.result.qr!.y, 0);
      assert.ok(turned.result.drawn.every((d) => d.box.y >= turned.result.qr!.side));
      // Pixel (x, y) of the upright picture is at (H - 1 - y, x) on the panel.
      const { frame, panel: out } = turned;
      for (const [x, y] of [
        [0, 0],
        [10, 200],
        [319, 479],
        [150, 300],
      ] as const) {
        assert.equal(out.pixels[x * out.rowPixels + (frame.height - 1 - y)], frame.pixels[y * frame.rowPixels + x]);
      }
      assert.notDeepEqual(upright.result.qr, turned.result.qr);
    },
  );
});
