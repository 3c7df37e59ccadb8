/**
 * One product, template selection or machine override read from a row of fields (a CSV line, a
 * JSON object), each field checked by planogram-rules.ts; a bad field is a problem naming where it
 * is ("line 4, column par", "templates[0].selections[3].par"). Shared by the CSV and the JSON import.
 */
import type { Language } from '../../config/languages.js';
import {
  MAX_CAPACITY,
  MAX_SELECTION,
  codeOf,
  nameOf,
  namesOf,
  priceOf,
  valuesProblem,
  wholeOf,
  type Check,
  type Override,
  type Problem,
  type Product,
  type TemplateSelection,
} from './planogram-rules.js';

/** A row: each field as text ('' when absent), and where a field of it is. */
export interface Row {
  get(field: string): string;
  at(field: string): string;
}

/** Collects the problems of one row; `take` is a field's value, or undefined after noting why not. */
export class RowReader {
  constructor(
    readonly row: Row,
    readonly problems: Problem[],
  ) {}

  take<T>(field: string, check: (text: string) => Check<T>): T | undefined {
    const r = check(this.row.get(field));
    if (r.ok) return r.value;
    this.problems.push({ where: this.row.at(field), message: r.message });
    return undefined;
  }

  /** A field that may be left empty (then undefined, no problem). */
  optional<T>(field: string, check: (text: string) => Check<T>): T | undefined {
    return this.row.get(field).trim() === '' ? undefined : this.take(field, check);
  }

  note(field: string, message: string): void {
    this.problems.push({ where: this.row.at(field), message });
  }
}

/** A CSV cell the console exported with a leading ' (so a spreadsheet runs no formula) reads as it was. */
export function unguarded(text: string): string {
  return /^'[=+\-@\t\r]/.test(text) ? text.slice(1) : text;
}

const whole = (min: number, max: number) => (t: string) => wholeOf(t, min, max);
const required = (t: string): Check<string> =>
  t.trim() === '' ? { ok: false, message: 'needed here' } : { ok: true, value: t };

/** A product defined on a row (its code in `product`, its name in `name`), or undefined. */
export function productFrom(r: RowReader, names: (r: RowReader) => Product['names'] | undefined): Product | undefined {
  const n = r.problems.length;
  const code = r.take('product', (t) => codeOf(t, 'a product code'));
  const name = r.take('name', (t) => nameOf(unguarded(t), 255));
  const product: Product = {
    code: code ?? '',
    name: name ?? '',
    names: names(r) ?? {},
    measurement: r.optional('measurement', whole(0, 1_000_000)) ?? 1,
    unit: r.optional('unit', (t) => nameOf(unguarded(t), 50)) ?? 'Unit',
    ageLimit: r.optional('age_limit', whole(0, 120)) ?? null,
  };
  return r.problems.length === n ? product : undefined;
}

/** Names per language from a "de=Wasser|fr=Eau" field. */
export function namesField(r: RowReader): Partial<Record<Language, string>> | undefined {
  return r.optional('names', (t) => namesOf(unguarded(t)));
}

/** Whether the row defines its product (a name or any product field given). */
export function definesProduct(row: Row): boolean {
  return ['name', 'names', 'measurement', 'unit', 'age_limit'].some((f) => row.get(f).trim() !== '');
}

/** One selection of a template: every value needed. */
export function selectionFrom(r: RowReader): TemplateSelection | undefined {
  const n = r.problems.length;
  const s = {
    selection: r.take('selection', whole(0, MAX_SELECTION)),
    productCode: r.take('product', (t) => codeOf(t, 'a product code')),
    capacity: r.take('capacity', whole(1, MAX_CAPACITY)),
    par: r.take('par', whole(0, MAX_CAPACITY)),
    threshold: r.take('threshold', whole(0, MAX_CAPACITY)),
    priceMilli: r.take('price', priceOf),
  };
  if (r.problems.length > n) return undefined;
  const value = s as TemplateSelection;
  const problem = valuesProblem(value);
  if (problem !== null) {
    r.note(value.par > value.capacity ? 'par' : 'threshold', problem);
    return undefined;
  }
  return value;
}

/** A machine's own values for one selection: each may be left empty (the template's). */
export function overrideFrom(r: RowReader): Override | undefined {
  const n = r.problems.length;
  const selection = r.take('selection', whole(0, MAX_SELECTION));
  const o: Override = { selection: selection ?? 0 };
  const productCode = r.optional('product', (t) => codeOf(t, 'a product code'));
  const capacity = r.optional('capacity', whole(1, MAX_CAPACITY));
  const par = r.optional('par', whole(0, MAX_CAPACITY));
  const threshold = r.optional('threshold', whole(0, MAX_CAPACITY));
  const priceMilli = r.optional('price', priceOf);
  if (productCode !== undefined) o.productCode = productCode;
  if (capacity !== undefined) o.capacity = capacity;
  if (par !== undefined) o.par = par;
  if (threshold !== undefined) o.threshold = threshold;
  if (priceMilli !== undefined) o.priceMilli = priceMilli;
  return r.problems.length === n ? o : undefined;
}

export { required };
