import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Colors, createFrame, fillRect } from '../../src/display/frame.js';
import { writePngAtomic } from '../../src/display/outputs/png.js';
import { layoutToTerminal, qrToHalfBlocks } from '../../src/display/outputs/terminal.js';
import { qrMatrix, QUIET_ZONE } from '../../src/display/qr.js';
import { renderScreen } from '../../src/display/render.js';
import { isQrvendError } from '../../src/core/errors.js';
import { decodePng, decodeRgba, makeTempDir, QR_TEXTS } from './helpers.js';

const NOW = 1_700_000_000_000;

describe('PNG output', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  before(() => {
    tmp = makeTempDir();
  });
  after(() => tmp.cleanup());

  for (const [w, h] of [
    [800, 480],
    [480, 320],
    [1024, 600],
  ] as const) {
    for (const [label, text] of Object.entries(QR_TEXTS)) {
      it(`${w}x${h}: the ${label} text decodes from the PNG file`, () => {
        const frame = createFrame({ width: w, height: h, stride: w * 4, format: 'xrgb8888' });
        renderScreen(frame, { kind: 'idle', qrText: text }, NOW);
        const path = join(tmp.dir, `${w}x${h}-${label}.png`);
        writePngAtomic(path, frame);
        const png = decodePng(readFileSync(path));
        assert.deepEqual([png.width, png.height], [w, h]);
        assert.equal(png.text, text);
      });
    }
  }

  it('replaces the file atomically and leaves no temporary file behind', () => {
    const dir = join(tmp.dir, 'atomic');
    const path = join(dir, 'screen.png');
    mkdirSync(dir);
    const frame = createFrame({ width: 320, height: 240, stride: 1280, format: 'rgb565' });
    renderScreen(frame, { kind: 'idle', qrText: 'first' }, NOW);
    writePngAtomic(path, frame);
    renderScreen(frame, { kind: 'idle', qrText: 'second' }, NOW);
    writePngAtomic(path, frame);
    assert.equal(decodePng(readFileSync(path)).text, 'second');
    assert.deepEqual(readdirSync(dir), ['screen.png']);
  });

  it('an unwritable location is an error naming the file', () => {
    const frame = createFrame({ width: 64, height: 64, stride: 256, format: 'xrgb8888' });
    const path = join(tmp.dir, 'missing-dir', 'x.png');
    assert.throws(
      () => writePngAtomic(path, frame),
      (err) => isQrvendError(err, 'DISPLAY_UNAVAILABLE') && err.message.includes(path),
    );
  });
});

/** Turn half-block lines back into a module grid: a scanner's-eye view of the terminal output. */
function parseHalfBlocks(lines: string[], ansi: boolean): number[][] {
  const strip = (l: string) => l.replace(/\u001b\[[0-9;]*m/g, '');
  const rows: number[][] = [];
  for (const raw of lines) {
    const top: number[] = [];
    const bottom: number[] = [];
    for (const ch of strip(raw)) {
      // ink = the character's painted halves; in plain mode paint means a light module.
      const t = ch === '\u2580' || ch === '\u2588' ? 1 : 0;
      const b = ch === '\u2584' || ch === '\u2588' ? 1 : 0;
      top.push(ansi ? t : 1 - t);
      bottom.push(ansi ? b : 1 - b);
    }
    rows.push(top, bottom);
  }
  return rows;
}

describe('terminal output', () => {
  for (const ansi of [true, false]) {
    for (const [label, text] of Object.entries(QR_TEXTS)) {
      it(`${ansi ? 'ANSI' : 'plain'} half blocks of the ${label} text scan back to the same code`, () => {
        const matrix = qrMatrix(text);
        const grid = parseHalfBlocks(qrToHalfBlocks(matrix, { ansi }), ansi);
        // Rasterize the grid (3 px per module) and decode it like a camera would.
        const span = matrix.size + 2 * QUIET_ZONE;
        const px = 3;
        const frame = createFrame({ width: span * px, height: span * px, stride: span * px * 4, format: 'xrgb8888' });
        fillRect(frame, 0, 0, frame.width, frame.height, Colors.white);
        for (let r = 0; r < span; r++)
          for (let c = 0; c < span; c++) if (grid[r]![c] === 1) fillRect(frame, c * px, r * px, px, px, Colors.black);
        const rgba = Buffer.alloc(frame.width * frame.height * 4);
        for (let i = 0; i < frame.width * frame.height; i++) {
          const v = frame.pixels[i]! === 0 ? 0 : 255;
          rgba.fill(v, i * 4, i * 4 + 3);
          rgba[i * 4 + 3] = 255;
        }
        assert.equal(decodeRgba(rgba, frame.width, frame.height), text);
      });
    }
  }

  it('prints the amount and messages under the code', () => {
    const out = layoutToTerminal(
      { qrText: 'abc', headline: '\u20ac1.50', lines: ['Scan to pay', '30 s left'] },
      { ansi: false },
    );
    const lines = out
      .trimEnd()
      .split('\n')
      .map((l) => l.trim());
    assert.deepEqual(lines.slice(-3), ['\u20ac1.50', 'Scan to pay', '30 s left']);
  });

  it('says so instead of throwing when the text is too long for a QR code', () => {
    const out = layoutToTerminal({ qrText: 'x'.repeat(4000), headline: null, lines: [] }, { ansi: false });
    assert.match(out, /DISPLAY_QR_TOO_LONG/);
  });
});
