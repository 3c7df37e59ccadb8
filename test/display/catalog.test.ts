import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOG, DEFAULT_LOCALE, direction, LANGUAGES, translate } from '../../src/display/catalog/index.js';
import { en } from '../../src/display/catalog/en.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('message catalog', () => {
  for (const language of LANGUAGES) {
    it(`${language} has every key of the English catalog, none empty, with the same placeholders`, T, () => {
      const messages = CATALOG[language] as Record<string, string>;
      for (const key of Object.keys(en)) {
        assert.ok(Object.hasOwn(messages, key), `${language} lacks "${key}"`);
        assert.ok(messages[key]!.trim().length > 0, `${language} "${key}" is empty`);
        assert.deepEqual(
          placeholders(messages[key]!),
          placeholders(en[key as keyof typeof en]),
          `${language} "${key}" placeholders`,
        );
      }
      assert.deepEqual(Object.keys(messages).sort(), Object.keys(en).sort(), `${language} has keys English lacks`);
    });
  }

  it('the languages other than English are translated, not copies', T, () => {
    for (const language of LANGUAGES.filter((l) => l !== 'en'))
      assert.notEqual(CATALOG[language].scanToPay, en.scanToPay, language);
  });

  it('fills placeholders and knows Hebrew is right to left', T, () => {
    assert.equal(translate('de', 'secondsLeft', { seconds: 9 }), 'Noch 9 s');
    assert.equal(translate('he', 'code', { code: 'E-1' }), 'קוד E-1');
    assert.equal(direction('he'), 'rtl');
    assert.equal(direction('pl'), 'ltr');
  });

  it("Node's ICU formats money in every language's locale (full ICU, not English fallbacks)", T, () => {
    for (const language of LANGUAGES) {
      const locale = DEFAULT_LOCALE[language];
      assert.deepEqual(Intl.NumberFormat.supportedLocalesOf([locale]), [locale], `${locale} supported`);
    }
    assert.equal(new Intl.NumberFormat('pl-PL', { style: 'currency', currency: 'PLN' }).format(1.5), '1,50\u00a0zł');
  });
});
