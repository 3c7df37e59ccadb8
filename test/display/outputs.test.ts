import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DisplayOutputs, type DisplayConfig, type OutputName } from '../../src/display/outputs/index.js';
import { frameFromBytes } from '../../src/display/frame.js';
import { writeFileSync } from 'node:fs';
import { createCanvas } from '@napi-rs/canvas';
import { PNG } from 'pngjs';
import { isQrvendError } from '../../src/core/errors.js';
import type { Screen } from '../../src/ipc/messages.js';
import {
  decodeFrame,
  decodePng,
  displayConfig,
  FB_FIXTURES,
  makeFramebufferFile,
  makeTempDir,
  QR_TEXTS,
  sysfsRoot,
} from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const NOW = 1_700_000_000_000;
const FX = FB_FIXTURES[2]; // spi-480x320-16

function harness(dir: string, display: Partial<DisplayConfig>, clock = { now: NOW }, fixture: string = FX.name) {
  const unavailable: { output: OutputName; reason: string }[] = [];
  const recovered: OutputName[] = [];
  const renderErrors: unknown[] = [];
  const terminal: string[] = [];
  const outputs = new DisplayOutputs({
    display: displayConfig(display),
    sysfsRoot: sysfsRoot(fixture),
    writeTerminal: (t) => terminal.push(t),
    onUnavailable: (output, reason) => unavailable.push({ output, reason }),
    onRecovered: (output) => recovered.push(output),
    onRenderError: (err) => renderErrors.push(err),
    now: () => clock.now,
  });
  return { outputs, unavailable, recovered, renderErrors, terminal, clock, dir };
}

describe('DisplayOutputs', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  let n = 0;
  const sub = () => {
    const dir = join(tmp.dir, String(n++));
    mkdirSync(dir);
    return dir;
  };
  before(() => {
    tmp = makeTempDir();
  });
  after(() => tmp.cleanup());

  it('draws one screen on the framebuffer, the PNG (at the framebuffer size) and the terminal', () => {
    const dir = sub();
    const fb = makeFramebufferFile(dir, FX.stride * FX.height);
    const png = join(dir, 'screen.png');
    const h = harness(dir, { framebuffer: fb, png, terminal: true });
    h.outputs.show({ kind: 'idle', qrText: QR_TEXTS.url });
    assert.equal(decodeFrame(frameFromBytes(FX, readFileSync(fb))), QR_TEXTS.url);
    const decoded = decodePng(readFileSync(png));
    assert.deepEqual([decoded.text, decoded.width, decoded.height], [QR_TEXTS.url, FX.width, FX.height]);
    assert.equal(h.terminal.length, 1);
    assert.match(h.terminal[0]!, /Scan to pay/);
    assert.deepEqual(h.unavailable, []);
    h.outputs.close();
  });

  it('reports a missing framebuffer once, keeps writing the PNG, and notices when it appears', () => {
    const dir = sub();
    const fbPath = join(dir, 'fb0');
    const png = join(dir, 'screen.png');
    const h = harness(dir, { framebuffer: fbPath, png });
    for (const text of ['one', 'two', 'three']) h.outputs.show({ kind: 'idle', qrText: text });
    assert.equal(h.unavailable.length, 1);
    assert.equal(h.unavailable[0]!.output, 'framebuffer');
    assert.match(h.unavailable[0]!.reason, /does not exist/);
    assert.equal(decodePng(readFileSync(png)).text, 'three');
    // Without a framebuffer the PNG has the configured size.
    assert.equal(decodePng(readFileSync(png)).width, 320);

    makeFramebufferFile(dir, FX.stride * FX.height);
    h.outputs.show({ kind: 'idle', qrText: 'four' });
    assert.deepEqual(h.recovered, ['framebuffer']);
    assert.equal(decodeFrame(frameFromBytes(FX, readFileSync(fbPath))), 'four');
    assert.equal(h.unavailable.length, 1);
    h.outputs.close();
  });

  it('reports an unwritable PNG once and still draws the framebuffer', () => {
    const dir = sub();
    const fb = makeFramebufferFile(dir, FX.stride * FX.height);
    const h = harness(dir, { framebuffer: fb, png: join(dir, 'missing', 'screen.png') });
    h.outputs.show({ kind: 'idle', qrText: 'a' });
    h.outputs.show({ kind: 'idle', qrText: 'b' });
    assert.deepEqual(
      h.unavailable.map((u) => u.output),
      ['png'],
    );
    assert.equal(decodeFrame(frameFromBytes(FX, readFileSync(fb))), 'b');
    h.outputs.close();
  });

  it('redraws the countdown on the framebuffer on tick(), when the second changes', () => {
    const dir = sub();
    const fb = makeFramebufferFile(dir, FX.stride * FX.height);
    const png = join(dir, 'screen.png');
    const h = harness(dir, { framebuffer: fb, png });
    const screen: Screen = {
      kind: 'dynamic-qr',
      qrText: 'pay-1',
      amount: 1,
      currencyCode: 'EUR',
      decimalPlaces: 2,
      item: null,
      expiresAtMs: NOW + 10_500,
    };
    h.outputs.show(screen);
    const first = readFileSync(fb);
    const pngMtime = statSync(png).mtimeMs;
    assert.equal(h.outputs.nextTickInMs(), 501);
    h.clock.now = NOW + 501;
    h.outputs.tick();
    const second = readFileSync(fb);
    assert.ok(!first.equals(second), 'the countdown changed on the framebuffer');
    assert.equal(decodeFrame(frameFromBytes(FX, second)), 'pay-1');
    assert.equal(statSync(png).mtimeMs, pngMtime, 'the PNG is rewritten on screen changes only');
    h.clock.now = NOW + 11_000;
    assert.equal(h.outputs.nextTickInMs(), null, 'no ticks after expiry');
    h.outputs.show({ kind: 'idle', qrText: 'x' });
    h.clock.now = NOW;
    assert.equal(h.outputs.nextTickInMs(), null, 'no ticks for a screen without a countdown');
    h.outputs.close();
  });

  it('shows a notice instead of a QR code too large for the display', () => {
    const dir = sub();
    const png = join(dir, 'screen.png');
    const h = harness(dir, { png, width: 64, height: 64 });
    h.outputs.show({ kind: 'idle', qrText: QR_TEXTS.long });
    assert.equal(h.renderErrors.length, 1);
    assert.ok(isQrvendError(h.renderErrors[0], 'DISPLAY_QR_TOO_LONG'));
    const decoded = decodePng(readFileSync(png));
    assert.equal(decoded.text, null, 'no QR code drawn');
    assert.deepEqual(h.unavailable, []);
  });
  it(
    'a countdown tick writes only the rows of the countdown, not the whole frame',
    { timeout: TEST_DEADLINE_MS },
    () => {
      const dir = sub();
      const fb = makeFramebufferFile(dir, FX.stride * FX.height);
      const h = harness(dir, { framebuffer: fb });
      const screen: Screen = {
        kind: 'dynamic-qr',
        qrText: 'pay-2',
        amount: 1,
        currencyCode: 'EUR',
        decimalPlaces: 2,
        item: null,
        expiresAtMs: NOW + 30_000,
      };
      h.outputs.show(screen);
      const shown = readFileSync(fb);
      // Paint the "device" over: whatever the tick writes shows up as bytes that are not 0x5a.
      writeFileSync(fb, Buffer.alloc(shown.length, 0x5a));
      h.clock.now = NOW + 5_000;
      h.outputs.tick();
      const after = readFileSync(fb);
      const rows = new Set<number>();
      for (let i = 0; i < after.length; i++) if (after[i] !== 0x5a) rows.add(Math.floor(i / FX.stride));
      assert.ok(rows.size > 0, 'the tick wrote something');
      const first = Math.min(...rows);
      const last = Math.max(...rows);
      assert.ok(last - first + 1 < FX.height / 4, `the tick wrote rows ${first}..${last}, more than the countdown`);
      const place = h.outputs.lastRender!.countdown!;
      assert.ok(
        first >= place.textBox.y && last < place.barBox.y + place.barBox.h,
        "the rows written are the countdown's",
      );
      h.outputs.close();
    },
  );

  it(
    'draws upright on a panel mounted turned 90 degrees, and the countdown tick lands in the turned place',
    { timeout: TEST_DEADLINE_MS },
    () => {
      const dir = sub();
      const fx = FB_FIXTURES[0]; // dsi-800x480-32
      const fb = makeFramebufferFile(dir, fx.stride * fx.height);
      const h = harness(dir, { framebuffer: fb, rotate: 90 }, { now: NOW }, fx.name);
      h.outputs.show({
        kind: 'dynamic-qr',
        qrText: 'turned',
        amount: 1,
        currencyCode: 'EUR',
        decimalPlaces: 2,
        item: null,
        expiresAtMs: NOW + 30_000,
      });
      const shown = frameFromBytes(fx, readFileSync(fb));
      assert.equal(decodeFrame(shown), 'turned');
      // Laid out in portrait (480 wide, 800 tall): the QR is on top, i.e. at the right of the panel.
      const render = h.outputs.lastRender!;
      assert.equal(render.qr!.y, 0);
      h.clock.now = NOW + 5_000;
      h.outputs.tick();
      const ticked = frameFromBytes(fx, readFileSync(fb));
      assert.equal(decodeFrame(ticked), 'turned');
      assert.ok(!shown.data.equals(ticked.data), 'the countdown moved');
      h.outputs.close();
    },
  );

  it(
    'shows the operator logo from a PNG on the idle screen, and carries on without one that is broken',
    { timeout: TEST_DEADLINE_MS },
    async () => {
      const dir = sub();
      const logo = join(dir, 'logo.png');
      const canvas = createCanvas(120, 40);
      const ctx = canvas.getContext('2d');
      ctx.fillStyle = '#ff00ff';
      ctx.fillRect(0, 0, 120, 40);
      writeFileSync(logo, canvas.toBuffer('image/png'));
      const png = join(dir, 'screen.png');
      const h = harness(dir, { png, width: 800, height: 480, logo });
      await h.outputs.ready;
      h.outputs.show({ kind: 'idle', qrText: 'with-logo' });
      const picture = decodePng(readFileSync(png));
      assert.equal(picture.text, 'with-logo');
      const rgba = readPngRgba(readFileSync(png));
      assert.ok(hasColour(rgba, 0xff, 0x00, 0xff), 'the magenta logo is on the screen');

      const broken = join(dir, 'broken.png');
      writeFileSync(broken, 'not a picture');
      const h2 = harness(dir, { png, width: 800, height: 480, logo: broken });
      await h2.outputs.ready;
      assert.equal(h2.renderErrors.length, 1);
      assert.match(String((h2.renderErrors[0] as Error).message), /broken\.png/);
      h2.outputs.show({ kind: 'idle', qrText: 'no-logo' });
      assert.equal(decodePng(readFileSync(png)).text, 'no-logo');
    },
  );

  it('shows an SVG logo too', { timeout: TEST_DEADLINE_MS }, async () => {
    const dir = sub();
    const logo = join(dir, 'logo.svg');
    writeFileSync(
      logo,
      '<svg xmlns="http://www.w3.org/2000/svg" width="200" ' +
        'height="60"><rect width="200" height="60" fill="#00ffff"/></svg>',
    );
    const png = join(dir, 'screen.png');
    const h = harness(dir, { png, width: 800, height: 480, logo });
    await h.outputs.ready;
    assert.deepEqual(h.renderErrors, []);
    h.outputs.show({ kind: 'idle', qrText: 'svg-logo' });
    assert.ok(hasColour(readPngRgba(readFileSync(png)), 0x00, 0xff, 0xff), 'the cyan logo is on the screen');
  });
});

function readPngRgba(bytes: Buffer): Buffer {
  return PNG.sync.read(bytes).data;
}

function hasColour(rgba: Buffer, r: number, g: number, b: number): boolean {
  for (let i = 0; i < rgba.length; i += 4) if (rgba[i] === r && rgba[i + 1] === g && rgba[i + 2] === b) return true;
  return false;
}
