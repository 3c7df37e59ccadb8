/**
 * The message catalog: every word a shopper reads, in each supported language. Screens carry
 * keys (src/ipc/messages.ts); `translate` fills {placeholders}. English is the reference.
 */
import { de } from './de.js';
import { en } from './en.js';
import { es } from './es.js';
import { fr } from './fr.js';
import { he } from './he.js';
import { it } from './it.js';
import type { MessageKey, Messages } from './keys.js';
import { nl } from './nl.js';
import { pl } from './pl.js';
import { LANGUAGES, type Language } from '../../config/languages.js';

export type { MessageKey, Messages };

// The list is the configuration's (src/config/languages.ts); CATALOG below must have a table for each.
export { LANGUAGES, type Language };

export const CATALOG: Readonly<Record<Language, Messages>> = { en, de, fr, es, it, nl, pl, he };

/** Languages written right to left. */
const RTL: ReadonlySet<Language> = new Set(['he']);

export function direction(language: Language): 'ltr' | 'rtl' {
  return RTL.has(language) ? 'rtl' : 'ltr';
}

/** The message for a key with `{name}` placeholders filled in. */
export function translate(
  language: Language,
  key: MessageKey,
  values: Readonly<Record<string, string | number>> = {},
): string {
  return CATALOG[language][key].replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in values ? String(values[name]) : whole,
  );
}

/** A BCP 47 locale for a language when display.locale is not set. */
export const DEFAULT_LOCALE: Readonly<Record<Language, string>> = {
  en: 'en-GB',
  de: 'de-DE',
  fr: 'fr-FR',
  es: 'es-ES',
  it: 'it-IT',
  nl: 'nl-NL',
  pl: 'pl-PL',
  he: 'he-IL',
};
