import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GLYPH_HEIGHT, glyphRows, hasGlyph } from '../../src/display/font.js';
import { Colors, createFrame, fillRect, pixelValue } from '../../src/display/frame.js';
import { charsPerLine, drawText, textWidth, wrapText } from '../../src/display/text.js';

describe('built-in font', () => {
  it('has a distinct glyph for every printable ASCII character and the euro sign', () => {
    const seen = new Map<string, string>();
    const chars = [...Array.from({ length: 95 }, (_, i) => 32 + i), 0x20ac];
    for (const cp of chars) {
      assert.ok(hasGlyph(cp), `glyph for ${String.fromCodePoint(cp)}`);
      const key = Array.from(glyphRows(cp)).join(',');
      const other = seen.get(key);
      assert.equal(other, undefined, `${String.fromCodePoint(cp)} looks the same as ${other}`);
      seen.set(key, String.fromCodePoint(cp));
    }
  });

  it('draws characters it lacks as a question mark', () => {
    assert.deepEqual(glyphRows('\u00e9'.codePointAt(0)!), glyphRows('?'.codePointAt(0)!));
  });
});

describe('text drawing', () => {
  it('draws each glyph scaled exactly: the ink of "I" at scale 3 matches its picture', () => {
    const frame = createFrame({ width: 40, height: 40, stride: 160, format: 'xrgb8888' });
    fillRect(frame, 0, 0, 40, 40, Colors.white);
    drawText(frame, 'I', 2, 3, 3, Colors.black);
    const rows = glyphRows('I'.codePointAt(0)!);
    for (let y = 0; y < 40; y++) {
      for (let x = 0; x < 40; x++) {
        const gx = Math.floor((x - 2) / 3);
        const gy = Math.floor((y - 3) / 3);
        const inGlyph = gx >= 0 && gx < 5 && gy >= 0 && gy < GLYPH_HEIGHT && (rows[gy]! & (1 << (4 - gx))) !== 0;
        assert.equal(frame.pixels[y * frame.rowPixels + x] === 0, inGlyph, `pixel ${x},${y}`);
      }
    }
  });

  it('clips text running off the frame instead of wrapping into the next row', () => {
    const frame = createFrame({ width: 20, height: 10, stride: 40, format: 'rgb565' });
    fillRect(frame, 0, 0, 20, 10, Colors.white);
    drawText(frame, 'WWWWWW', 10, 0, 1, Colors.black);
    const black = pixelValue('rgb565', Colors.black);
    for (let y = 0; y < 10; y++) for (let x = 0; x < 10; x++) assert.notEqual(frame.pixels[y * frame.rowPixels + x], black, `pixel ${x},${y} left of the text`);
  });

  it('measures lines: n characters at scale s are (6n - 1) * s pixels wide', () => {
    assert.equal(textWidth('Scan to pay', 2), (6 * 11 - 1) * 2);
    assert.equal(textWidth('\u20ac1', 1), 11);
    assert.equal(charsPerLine(textWidth('x'.repeat(10), 3), 3), 10);
  });

  it('wraps at spaces, cuts long words, and marks text that does not fit', () => {
    assert.deepEqual(wrapText('Insufficient funds on the account', 12, 5), ['Insufficient', 'funds on the', 'account']);
    assert.deepEqual(wrapText('abcdefghijkl', 5, 5), ['abcde', 'fghij', 'kl']);
    assert.deepEqual(wrapText('one two three four five six', 9, 2), ['one two', 'three...']);
    assert.deepEqual(wrapText('   ', 10, 2), []);
  });
});
