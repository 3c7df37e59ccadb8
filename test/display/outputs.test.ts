import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DisplayOutputs, type DisplayConfig, type OutputName } from '../../src/display/outputs/index.js';
import { frameFromBytes } from '../../src/display/frame.js';
import { isQrvendError } from '../../src/core/errors.js';
import type { Screen } from '../../src/ipc/messages.js';
import { decodeFrame, decodePng, displayConfig, FB_FIXTURES, makeFramebufferFile, makeTempDir, QR_TEXTS, sysfsRoot } from './helpers.js';

const NOW = 1_700_000_000_000;
const FX = FB_FIXTURES[2]; // spi-480x320-16

function harness(dir: string, display: Partial<DisplayConfig>, clock = { now: NOW }) {
  const unavailable: { output: OutputName; reason: string }[] = [];
  const recovered: OutputName[] = [];
  const renderErrors: unknown[] = [];
  const terminal: string[] = [];
  const outputs = new DisplayOutputs({
    display: displayConfig(display),
    sysfsRoot: sysfsRoot(FX.name),
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
    assert.deepEqual(h.unavailable.map((u) => u.output), ['png']);
    assert.equal(decodeFrame(frameFromBytes(FX, readFileSync(fb))), 'b');
    h.outputs.close();
  });

  it('redraws the countdown on the framebuffer on tick(), when the second changes', () => {
    const dir = sub();
    const fb = makeFramebufferFile(dir, FX.stride * FX.height);
    const png = join(dir, 'screen.png');
    const h = harness(dir, { framebuffer: fb, png });
    const screen: Screen = { kind: 'dynamic-qr', qrText: 'pay-1', amount: 1, currencyCode: 'EUR', decimalPlaces: 2, item: null, expiresAtMs: NOW + 10_500 };
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
});
