import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFrame, frameFromBytes } from '../../src/display/frame.js';
import { openFramebuffer, readFramebufferGeometry } from '../../src/display/outputs/framebuffer.js';
import { renderScreen } from '../../src/display/render.js';
import { isQrvendError } from '../../src/core/errors.js';
import type { Screen } from '../../src/ipc/messages.js';
import { decodeFrame, FB_FIXTURES, makeFramebufferFile, makeTempDir, QR_TEXTS, sysfsRoot } from './helpers.js';

const NOW = 1_700_000_000_000;

describe('framebuffer geometry from sysfs', () => {
  for (const fx of FB_FIXTURES) {
    it(`${fx.name}: ${fx.width}x${fx.height} ${fx.format}, stride ${fx.stride}`, () => {
      assert.deepEqual(readFramebufferGeometry('/dev/fb0', sysfsRoot(fx.name)), {
        width: fx.width,
        height: fx.height,
        stride: fx.stride,
        format: fx.format,
      });
    });
  }

  it('refuses 24 bits per pixel, saying which depths work', () => {
    assert.throws(
      () => readFramebufferGeometry('/dev/fb0', sysfsRoot('bad-24bpp')),
      (err) =>
        isQrvendError(err, 'DISPLAY_UNAVAILABLE') &&
        /24 bits per pixel/.test(err.message) &&
        /16 and 32/.test(err.message),
    );
  });

  it('names the missing sysfs file of a framebuffer that is not there', () => {
    assert.throws(
      () => readFramebufferGeometry('/dev/fb3', sysfsRoot('dsi-800x480-32')),
      (err) => isQrvendError(err, 'DISPLAY_UNAVAILABLE') && /fb3\/virtual_size/.test(err.message),
    );
  });

  it('refuses a device name that is not fbN', () => {
    assert.throws(
      () => readFramebufferGeometry('/dev/ttyAMA0'),
      (err) => isQrvendError(err, 'DISPLAY_UNAVAILABLE') && /fbN/.test(err.message),
    );
  });
});

describe('drawing into a file laid out like the framebuffer', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  before(() => {
    tmp = makeTempDir();
  });
  after(() => tmp.cleanup());

  for (const fx of FB_FIXTURES) {
    for (const [label, text] of Object.entries(QR_TEXTS)) {
      it(`${fx.name}: the ${label} text (${text.length} chars) decodes from the pixels read back`, () => {
        const dir = join(tmp.dir, `${fx.name}-${label}`);
        mkdirSync(dir, { recursive: true });
        const device = makeFramebufferFile(dir, fx.stride * fx.height);
        const fb = openFramebuffer(device, sysfsRoot(fx.name));
        try {
          const frame = createFrame(fb.geometry);
          const screen: Screen = {
            kind: 'dynamic-qr',
            qrText: text,
            amount: 3.2,
            currencyCode: 'EUR',
            decimalPlaces: 2,
            item: null,
            expiresAtMs: NOW + 20_000,
          };
          renderScreen(frame, screen, NOW);
          fb.write(frame);
        } finally {
          fb.close();
        }
        const bytes = readFileSync(device);
        assert.equal(bytes.length, fx.stride * fx.height, 'the device keeps its size');
        const readBack = frameFromBytes(fx, bytes);
        assert.equal(decodeFrame(readBack), text);
        // Every visible pixel was written (the 0x5a fill pattern is gone from the visible area).
        const bpp = fx.format === 'rgb565' ? 2 : 4;
        for (const row of [0, fx.height >> 1, fx.height - 1]) {
          const visible = bytes.subarray(row * fx.stride, row * fx.stride + fx.width * bpp);
          assert.ok(!visible.every((b) => b === 0x5a), `row ${row} was drawn`);
        }
      });
    }
  }

  it('writes 32-bit pixels as little-endian XRGB (blue byte first) and 16-bit as RGB565', () => {
    const dir = join(tmp.dir, 'byte-order');
    mkdirSync(dir, { recursive: true });
    for (const fx of [FB_FIXTURES[0], FB_FIXTURES[1]]) {
      const device = makeFramebufferFile(dir, fx.stride * fx.height);
      const fb = openFramebuffer(device, sysfsRoot(fx.name));
      const frame = createFrame(fb.geometry);
      renderScreen(frame, { kind: 'declined', reason: 'declined', code: 5 }, NOW);
      fb.write(frame);
      fb.close();
      const bytes = readFileSync(device);
      // The top-left pixel is the white page; a red headline pixel has the expected bytes.
      if (fx.format === 'xrgb8888') {
        assert.deepEqual([...bytes.subarray(0, 4)], [0xff, 0xff, 0xff, 0x00]);
        const red = Buffer.from([0x28, 0x28, 0xc6, 0x00]); // 0xc62828 as B, G, R, X
        assert.ok(bytes.indexOf(red) >= 0, 'a red pixel stored B,G,R,X');
      } else {
        assert.deepEqual([...bytes.subarray(0, 2)], [0xff, 0xff]);
        const red565 = ((0xc6 >> 3) << 11) | ((0x28 >> 2) << 5) | (0x28 >> 3);
        assert.ok(
          bytes.indexOf(Buffer.from([red565 & 0xff, red565 >> 8])) >= 0,
          'a red pixel stored little-endian RGB565',
        );
      }
    }
  });

  it('a missing device is an error naming it, and no file is created', () => {
    const device = join(tmp.dir, 'no-such', 'fb0');
    assert.throws(
      () => openFramebuffer(device, sysfsRoot('dsi-800x480-32')),
      (err) =>
        isQrvendError(err, 'DISPLAY_UNAVAILABLE') && err.message.includes(device) && /does not exist/.test(err.message),
    );
  });
});
