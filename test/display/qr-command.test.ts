import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runQr } from '../../src/display/qr-command.js';
import { frameFromBytes } from '../../src/display/frame.js';
import { isQrvendError } from '../../src/core/errors.js';
import {
  decodeFrame,
  decodePng,
  FB_FIXTURES,
  makeFramebufferFile,
  makeTempDir,
  QR_TEXTS,
  sysfsRoot,
} from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const run = promisify(execFile);

describe('qrvend qr', { timeout: TEST_DEADLINE_MS }, () => {
  let tmp: ReturnType<typeof makeTempDir>;
  before(() => {
    tmp = makeTempDir();
  });
  after(() => tmp.cleanup());
  const env = { ...process.env, QRVEND_CONFIG: '' };

  it('writes a PNG of the requested size with the amount and message', () => {
    const png = join(tmp.dir, 'sticker.png');
    const out: string[] = [];
    runQr(QR_TEXTS.url, { png, width: '480', height: '320', amount: '1.5', message: 'Thank you' }, (s) => out.push(s));
    const decoded = decodePng(readFileSync(png));
    assert.deepEqual([decoded.text, decoded.width, decoded.height], [QR_TEXTS.url, 480, 320]);
    assert.match(out.join(''), /wrote .*sticker\.png \(480x320, \d+ px per module\)/);
  });

  it('draws on a framebuffer, taking its geometry from sysfs', () => {
    const fx = FB_FIXTURES[5];
    const device = makeFramebufferFile(tmp.dir, fx.stride * fx.height);
    runQr(QR_TEXTS.long, { fb: device, sysfs: sysfsRoot(fx.name) }, () => {});
    assert.equal(decodeFrame(frameFromBytes(fx, readFileSync(device))), QR_TEXTS.long);
  });

  it('prints to the terminal by default', () => {
    const out: string[] = [];
    runQr('hello', { amount: '2', currency: 'USD', decimals: '2' }, (s) => out.push(s));
    assert.match(out.join(''), /\u2588/);
    assert.match(out.join(''), /US\$2\.00/, 'en-GB writes US dollars as US$');
  });

  it('refuses bad options with a message naming the option', () => {
    assert.throws(
      () => runQr('x', { amount: 'abc' }, () => {}),
      (e) => isQrvendError(e, 'CLI_USAGE') && /--amount/.test(e.message),
    );
    assert.throws(
      () => runQr('x', { png: join(tmp.dir, 'a.png'), width: '10' }, () => {}),
      (e) => isQrvendError(e, 'CLI_USAGE') && /--width/.test(e.message),
    );
    assert.throws(
      () => runQr('x', { errorCorrection: 'Z' }, () => {}),
      (e) => isQrvendError(e, 'CLI_USAGE') && /--error-correction/.test(e.message),
    );
  });

  for (const [what, args, pattern] of [
    ['text too long for a QR code', ['x'.repeat(3000)], /DISPLAY_QR_TOO_LONG: the QR text \(3000 bytes\) is too long/],
    [
      'an unwritable PNG file',
      ['hi', '--png', '/nonexistent-dir/qr.png'],
      /DISPLAY_UNAVAILABLE: PNG file \/nonexistent-dir\/qr\.png cannot be written/,
    ],
    [
      'a missing framebuffer',
      ['hi', '--fb', '/nonexistent-dir/fb0'],
      /DISPLAY_UNAVAILABLE: framebuffer \/nonexistent-dir\/fb0 is not usable: the device does not exist/,
    ],
  ] as const) {
    it(`the CLI exits 1 naming ${what}`, { timeout: TEST_DEADLINE_MS }, async () => {
      const result = await run(process.execPath, [MAIN, 'qr', ...args], { env }).then(
        () => ({ code: 0, stderr: '' }),
        (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
      );
      assert.equal(result.code, 1);
      assert.match(result.stderr, pattern);
    });
  }
});
