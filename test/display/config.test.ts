import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CONFIG_PATH, layer, readJsonFile, validateConfig } from '../../src/config/load.js';
import { isQrvendError } from '../../src/core/errors.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const defaults = readJsonFile(DEFAULT_CONFIG_PATH, 'defaults');
const withDisplay = (display: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  validateConfig(layer(defaults, { display, ...extra } as Parameters<typeof layer>[1]), 'test');
const invalid = (display: Record<string, unknown>, path: RegExp) =>
  assert.throws(
    () => withDisplay(display),
    (e) => isQrvendError(e, 'CONFIG_INVALID') && path.test(e.message),
  );

describe('display settings', () => {
  it('defaults: English, the language locale, upright, no logo, no receipt, light colours', T, () => {
    const { display } = withDisplay({});
    assert.deepEqual(
      [display.language, display.locale, display.rotate, display.logo, display.receiptUrl],
      ['en', null, 0, null, null],
    );
    assert.equal(display.colors.background, '#ffffff');
  });

  it('takes a language, a locale Node knows, a rotation and product names per language', T, () => {
    const config = withDisplay(
      { language: 'he', locale: 'he-IL', rotate: 270, receiptUrl: 'https://r.example/{txId}' },
      { catalog: { '12': { name: 'Water', names: { he: 'מים' } } } },
    );
    assert.equal(config.display.language, 'he');
    assert.equal(config.display.rotate, 270);
    assert.equal(config.catalog['12']!.names.he, 'מים');
  });

  it('refuses what it cannot show, naming the key', T, () => {
    invalid({ language: 'xx' }, /display\.language/);
    invalid({ locale: 'not a locale!' }, /display\.locale/);
    invalid({ rotate: 45 }, /display\.rotate/);
    invalid({ receiptUrl: 'https://r.example/receipt' }, /display\.receiptUrl.*\{txId\}/);
    invalid({ colors: { background: 'white' } }, /display\.colors\.background/);
  });
});
