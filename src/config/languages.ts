/**
 * The display languages the configuration accepts (display.language, a product's `names`). The
 * word tables themselves are the display's (src/display/catalog), which must hold one table per
 * language listed here: its CATALOG is typed by this list, so a language without a table does not
 * compile. Kept apart from the tables so the configuration does not load every word to validate.
 */
export const LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pl', 'he'] as const;
export type Language = (typeof LANGUAGES)[number];
