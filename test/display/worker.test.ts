import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDisplay, type DisplayHandle } from '../../src/display/display-thread.js';
import { frameFromBytes } from '../../src/display/frame.js';
import { silentLogger } from '../../src/core/log.js';
import type { FromDisplay, Screen, ToDisplay } from '../../src/ipc/messages.js';
import {
  decodeFrame,
  decodePng,
  displayConfig,
  FB_FIXTURES,
  makeFramebufferFile,
  makeTempDir,
  sysfsRoot,
} from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const FX = FB_FIXTURES[0]; // dsi-800x480-32

/** Collects worker events and lets a test wait for one that matches. */
function eventLog() {
  const events: FromDisplay[] = [];
  const waiters: { match: (e: FromDisplay) => boolean; resolve: (e: FromDisplay) => void }[] = [];
  return {
    events,
    onEvent(e: FromDisplay) {
      events.push(e);
      for (const w of [...waiters]) {
        if (w.match(e)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(e);
        }
      }
    },
    waitFor(match: (e: FromDisplay) => boolean): Promise<FromDisplay> {
      const seen = events.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
  };
}

const rendered = (kind: Screen['kind']) => (e: FromDisplay) => e.type === 'rendered' && e.kind === kind;

describe('display worker', { timeout: TEST_DEADLINE_MS }, () => {
  let tmp: ReturnType<typeof makeTempDir>;
  const handles: DisplayHandle[] = [];
  before(() => {
    tmp = makeTempDir();
  });
  after(async () => {
    await Promise.all(handles.map((h) => h.close()));
    tmp.cleanup();
  });

  it(
    'shows the idle screen at start, then renders posted screens to the framebuffer and the PNG',
    { timeout: TEST_DEADLINE_MS },
    async () => {
      const dir = join(tmp.dir, 'basic');
      mkdirSync(dir);
      const fb = makeFramebufferFile(dir, FX.stride * FX.height);
      const png = join(dir, 'screen.png');
      const log = eventLog();
      const display = startDisplay({
        display: displayConfig({ framebuffer: fb, png, terminal: false, width: 800, height: 480 }),
        machine: { uniQr: 'QRVEND-UNIT-7' },
        log: silentLogger(),
        sysfsRoot: sysfsRoot(FX.name),
        onEvent: log.onEvent,
      });
      handles.push(display);
      await log.waitFor(rendered('idle'));
      assert.equal(decodePng(readFileSync(png)).text, 'QRVEND-UNIT-7');

      display.show({
        kind: 'dynamic-qr',
        qrText: 'https://pay.example.com/t/99',
        amount: 2,
        currencyCode: 'EUR',
        decimalPlaces: 2,
        item: null,
        expiresAtMs: Date.now() + 30_000,
      });
      const event = await log.waitFor(rendered('dynamic-qr'));
      assert.equal(event.type === 'rendered' && typeof event.ms, 'number');
      assert.equal(decodePng(readFileSync(png)).text, 'https://pay.example.com/t/99');
      assert.equal(decodeFrame(frameFromBytes(FX, readFileSync(fb))), 'https://pay.example.com/t/99');
      assert.deepEqual(
        log.events.filter((e) => e.type === 'unavailable'),
        [],
      );
      await display.close();
    },
  );

  it('reports a missing framebuffer once and keeps rendering the PNG', { timeout: TEST_DEADLINE_MS }, async () => {
    const dir = join(tmp.dir, 'missing-fb');
    mkdirSync(dir);
    const png = join(dir, 'screen.png');
    const log = eventLog();
    const display = startDisplay({
      display: displayConfig({ framebuffer: join(dir, 'fb0'), png, terminal: false, width: 480, height: 320 }),
      log: silentLogger(),
      sysfsRoot: sysfsRoot(FX.name),
      onEvent: log.onEvent,
    });
    handles.push(display);
    display.show({ kind: 'declined', reason: 'insufficient-funds', code: 1 });
    await log.waitFor(rendered('declined'));
    display.show({ kind: 'idle', qrText: 'after-decline' });
    await log.waitFor(rendered('idle'));
    const unavailable = log.events.filter((e) => e.type === 'unavailable');
    assert.equal(unavailable.length, 1);
    assert.equal(unavailable[0]!.type === 'unavailable' && unavailable[0]!.output, 'framebuffer');
    assert.equal(decodePng(readFileSync(png)).text, 'after-decline');
    await display.close();
  });

  it('accepts screens through its port and draws the newest of a burst', { timeout: TEST_DEADLINE_MS }, async () => {
    const dir = join(tmp.dir, 'port');
    mkdirSync(dir);
    const png = join(dir, 'screen.png');
    const log = eventLog();
    const display = startDisplay({
      display: displayConfig({ framebuffer: null, png, terminal: false, width: 320, height: 240 }),
      log: silentLogger(),
      onEvent: log.onEvent,
    });
    handles.push(display);
    // As the payment worker would: ToDisplay messages on the transferred port.
    for (let i = 0; i < 30; i++)
      display.port.postMessage({ type: 'show', screen: { kind: 'idle', qrText: `burst-${i}` } } satisfies ToDisplay);
    display.port.postMessage({ type: 'show', screen: { kind: 'session-ended' } } satisfies ToDisplay);
    await log.waitFor(rendered('session-ended'));
    const renders = log.events.filter((e) => e.type === 'rendered').length;
    assert.ok(renders >= 1 && renders <= 31, `${renders} renders for 31 screens`);
    const last = log.events.filter((e) => e.type === 'rendered').at(-1);
    assert.deepEqual(last && last.type === 'rendered' && last.kind, 'session-ended', 'the newest screen is drawn last');
    assert.equal(decodePng(readFileSync(png)).text, null, 'the session-ended screen has no QR code');
    await display.close();
  });

  it('close() ends the worker and later show() calls are ignored', { timeout: TEST_DEADLINE_MS }, async () => {
    const log = eventLog();
    const display = startDisplay({
      display: displayConfig({ framebuffer: null, png: null, terminal: false, width: 320, height: 240 }),
      log: silentLogger(),
      onEvent: log.onEvent,
    });
    display.show({ kind: 'idle', qrText: 'x' });
    await log.waitFor(rendered('idle'));
    await display.close();
    display.show({ kind: 'declined', reason: 'declined', code: 5 });
    await display.close();
    assert.equal(log.events.filter((e) => e.type === 'rendered').length, 1);
  });
});
