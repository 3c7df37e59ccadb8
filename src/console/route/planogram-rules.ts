/**
 * What a planogram is and what it may hold (docs/console.md, "A day on the route"), pure: the
 * products (what the machine's screens and the gateway need: names per language, measurement and
 * unit, age limit, within the site file's own ranges, src/config/schema/primitives.ts), the
 * templates (a machine model's selections: MDB item number, product, capacity, par level, refill
 * threshold, intended price) and the machines (the template each runs, its own values over it).
 * The console's forms and its CSV and JSON imports check every value here, and the set as a whole
 * (a product or template named but not defined, a par above the capacity, a selection twice).
 */
import { LANGUAGES, type Language } from '../../config/languages.js';
import { TOPIC_LEVEL } from '../../fleet/contract/topics.js';

export interface Product {
  code: string;
  name: string;
  names: Partial<Record<Language, string>>;
  measurement: number;
  unit: string;
  ageLimit: number | null;
}

export interface PlannedValues {
  productCode: string;
  capacity: number;
  par: number;
  threshold: number;
  /** Thousandths of the currency unit. */
  priceMilli: number;
}

export interface TemplateSelection extends PlannedValues {
  selection: number;
}

export interface Template {
  templateId: string;
  model: string;
  selections: TemplateSelection[];
}

/** A machine's own values for one selection; what is absent is the template's. */
export type Override = { selection: number } & Partial<PlannedValues>;

export interface MachinePlan {
  machineId: string;
  templateId: string;
  overrides: Override[];
}

/** Everything a planogram file holds (an import or an export). */
export interface PlanogramSet {
  products: Product[];
  templates: Template[];
  machines: MachinePlan[];
}

/** A problem and where it is: "line 4, column par" in a CSV, "templates[0].selections[3].par" in JSON. */
export interface Problem {
  where: string;
  message: string;
}

/** The stock arithmetic masks the item number's flag bits (stock-ingest.ts): a selection is 0-4095. */
export const MAX_SELECTION = 4095;
export const MAX_CAPACITY = 1000;
export const MAX_PRICE_MILLI = 1_000_000_000;
export const CODE = /^[A-Za-z0-9._-]{1,64}$/;

export type Check<T> = { ok: true; value: T } | { ok: false; message: string };
const fail = (message: string) => ({ ok: false, message }) as const;

export function codeOf(text: string, what: string): Check<string> {
  const t = text.trim();
  return CODE.test(t) ? { ok: true, value: t } : fail(`${what} is 1-64 letters, digits or . _ - (got "${t}")`);
}

export function machineIdOf(text: string): Check<string> {
  const t = text.trim();
  return TOPIC_LEVEL.test(t) ? { ok: true, value: t } : fail(`a machine id is 1-128 letters, digits or . _ : -`);
}

export function wholeOf(text: string, min: number, max: number): Check<number> {
  const t = text.trim();
  if (!/^\d{1,10}$/.test(t)) return fail(`a whole number from ${min} to ${max} (got "${t}")`);
  const n = Number(t);
  return n >= min && n <= max ? { ok: true, value: n } : fail(`${n} is not from ${min} to ${max}`);
}

/** A price as decimal text, at most 3 decimals ("1.50") -> thousandths. */
export function priceOf(text: string): Check<number> {
  const m = /^(\d{1,7})(?:[.](\d{1,3}))?$/.exec(text.trim());
  if (m === null) return fail(`a price is a decimal with at most 3 decimals, e.g. 1.50 (got "${text.trim()}")`);
  return { ok: true, value: Number(m[1]) * 1000 + Number((m[2] ?? '').padEnd(3, '0')) };
}

export function nameOf(text: string, max: number): Check<string> {
  const t = text.trim();
  if (t.length === 0) return fail(`needed here (1-${max} characters)`);
  if (t.length > max) return fail(`at most ${max} characters`);
  // The screens draw it: no control characters.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(t)) return fail('no control characters');
  return { ok: true, value: t };
}

/** "de=Wasser|fr=Eau" -> { de: "Wasser", fr: "Eau" }, each a display language (src/config/languages.ts). */
export function namesOf(text: string): Check<Partial<Record<Language, string>>> {
  const names: Partial<Record<Language, string>> = {};
  if (text.trim() === '') return { ok: true, value: names };
  for (const part of text.split('|')) {
    const m = /^\s*([a-z]{2})\s*=(.*)$/.exec(part);
    if (m === null) return fail(`names are lang=name pairs split by |, e.g. de=Wasser|fr=Eau (got "${part.trim()}")`);
    const lang = m[1] as Language;
    if (!LANGUAGES.includes(lang)) return fail(`${lang} is not a display language (${LANGUAGES.join(', ')})`);
    const name = nameOf(m[2] ?? '', 255);
    if (!name.ok) return fail(`${lang}: ${name.message}`);
    names[lang] = name.value;
  }
  return { ok: true, value: names };
}

export function namesText(names: Partial<Record<Language, string>>): string {
  return Object.entries(names)
    .map(([lang, name]) => `${lang}=${name}`)
    .join('|');
}

/** Why a selection's values do not fit together, or null: par within capacity, threshold within par. */
export function valuesProblem(v: Pick<PlannedValues, 'capacity' | 'par' | 'threshold'>): string | null {
  if (v.par > v.capacity) return `the par level ${v.par} is above the capacity ${v.capacity}`;
  if (v.threshold > v.par) return `the threshold ${v.threshold} is above the par level ${v.par}`;
  return null;
}

/** What the set refers to that is already in the database (a product, a template's selections). */
export interface Known {
  products: ReadonlySet<string>;
  templates: ReadonlyMap<string, ReadonlyMap<number, PlannedValues>>;
}

/** Where each item of a set came from, to name it in a problem. */
export interface Places {
  template(templateIndex: number, selectionIndex: number, column: string): string;
  machine(machineIndex: number, overrideIndex: number | null, column: string): string;
}

/** The set as a whole: every product and template it names exists, and each machine's values fit together. */
export function crossCheck(set: PlanogramSet, known: Known, places: Places): Problem[] {
  const problems: Problem[] = [];
  const products = new Set([...known.products, ...set.products.map((p) => p.code)]);
  const templates = new Map(known.templates);
  set.templates.forEach((t, ti) => {
    templates.set(t.templateId, new Map(t.selections.map((s) => [s.selection, s])));
    t.selections.forEach((s, si) => {
      if (!products.has(s.productCode))
        problems.push({
          where: places.template(ti, si, 'product'),
          message: `product ${s.productCode} is not defined`,
        });
    });
  });
  set.machines.forEach((m, mi) => {
    const template = templates.get(m.templateId);
    if (template === undefined) {
      problems.push({
        where: places.machine(mi, null, 'template'),
        message: `template ${m.templateId} is not defined`,
      });
      return;
    }
    m.overrides.forEach((o, oi) => {
      const at = (column: string) => places.machine(mi, oi, column);
      const base = template.get(o.selection);
      if (base === undefined) {
        problems.push({
          where: at('selection'),
          message: `selection ${o.selection} is not in template ${m.templateId}`,
        });
        return;
      }
      if (o.productCode !== undefined && !products.has(o.productCode))
        problems.push({ where: at('product'), message: `product ${o.productCode} is not defined` });
      const problem = valuesProblem({ ...base, ...o });
      if (problem !== null) problems.push({ where: at('par'), message: `with the template's values, ${problem}` });
    });
  });
  return problems;
}
