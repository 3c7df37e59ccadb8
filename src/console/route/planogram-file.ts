/**
 * Planogram files (docs/console.md, "Planogram files"): CSV and JSON, read and written. A CSV
 * line is a template's selection (with its product's fields, which define the product), a
 * machine's template and its own values for a selection, or a product alone; the JSON holds the
 * same as products, templates and machines. Reading names each bad line and column (or JSON
 * path); a file with any problem gives nothing (planogram-set.ts). The CSV is parsed by csv-parse.
 */
import { parse } from 'csv-parse/sync';
import { csv } from '../web/csv.js';
import {
  codeOf,
  machineIdOf,
  nameOf,
  namesText,
  type Known,
  type PlanogramSet,
  type Problem,
} from './planogram-rules.js';
import {
  RowReader,
  definesProduct,
  namesField,
  overrideFrom,
  productFrom,
  selectionFrom,
  unguarded,
  type Row,
} from './planogram-fields.js';
import { MAX_IMPORT_ROWS, SetBuilder, type ParsedSet } from './planogram-set.js';

export const CSV_COLUMNS = [
  'template',
  'model',
  'machine',
  'selection',
  'product',
  'name',
  'names',
  'measurement',
  'unit',
  'age_limit',
  'capacity',
  'par',
  'threshold',
  'price',
] as const;

const refused = (problems: Problem[]): ParsedSet => ({ ok: false, problems });

/** One row into the set: a machine's line, a template's selection, or a product alone. */
function readRow(b: SetBuilder, row: Row): void {
  const r = new RowReader(row, b.problems);
  const has = (f: string) => row.get(f).trim() !== '';
  if (has('machine')) {
    const machineId = r.take('machine', machineIdOf);
    const templateId = r.take('template', (t) => codeOf(t, 'the template a machine runs'));
    const override = has('selection') ? overrideFrom(r) : null;
    if (definesProduct(row)) r.note('name', 'a machine line does not define a product: put it on a line of its own');
    if (machineId !== undefined && templateId !== undefined && override !== undefined)
      b.addMachine(machineId, templateId, override, row);
    return;
  }
  if (definesProduct(row) || (has('product') && !has('template'))) {
    const product = productFrom(r, namesField);
    if (product !== undefined) b.addProduct(product, row);
  }
  if (!has('template')) return;
  const templateId = r.take('template', (t) => codeOf(t, 'a template name'));
  const model = has('model') ? r.take('model', (t) => nameOf(unguarded(t), 128)) : '';
  const selection = selectionFrom(r);
  if (templateId === undefined || model === undefined) return;
  b.addTemplate(templateId, model, row);
  if (selection !== undefined) b.addSelection(templateId, selection, row);
}

/** A CSV planogram file (a header line naming its columns, then a line per item). */
export function readPlanogramCsv(text: string, known: Known): ParsedSet {
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(text, { bom: true, info: true, relax_column_count: true, skip_empty_lines: true }) as unknown as {
      record: string[];
      info: { lines: number };
    }[];
  } catch (err) {
    const e = err as { lines?: number; message?: string };
    return refused([{ where: `line ${e.lines ?? '?'}`, message: String(e.message ?? err).slice(0, 300) }]);
  }
  if (records.length === 0) return refused([{ where: 'line 1', message: 'the file is empty' }]);
  if (records.length > MAX_IMPORT_ROWS + 1)
    return refused([{ where: `line ${MAX_IMPORT_ROWS + 2}`, message: `at most ${MAX_IMPORT_ROWS} lines` }]);
  const header = records[0]!.record.map((h) => h.trim().toLowerCase());
  const problems: Problem[] = [];
  header.forEach((h, i) => {
    if (!(CSV_COLUMNS as readonly string[]).includes(h))
      problems.push({ where: `line 1, column ${i + 1}`, message: `"${h}" is not one of ${CSV_COLUMNS.join(', ')}` });
    else if (header.indexOf(h) !== i) problems.push({ where: `line 1, column ${h}`, message: 'given twice' });
  });
  if (problems.length > 0) return refused(problems);
  const b = new SetBuilder();
  for (const { record, info } of records.slice(1)) {
    if (record.every((c) => c.trim() === '')) continue;
    if (record.length > header.length)
      b.problems.push({
        where: `line ${info.lines}`,
        message: `${record.length} cells, the header has ${header.length}`,
      });
    readRow(b, {
      get: (f) => {
        const i = header.indexOf(f);
        return i < 0 ? '' : (record[i] ?? '');
      },
      at: (f) => `line ${info.lines}, column ${f}`,
    });
  }
  return b.result(known);
}

/** A JSON value as a field's text; objects and the like are refused where they stand. */
function fieldText(value: unknown): string | null {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/** A JSON object as a row: its keys (JSON name -> field) checked, names per language as an object. */
function jsonRow(value: unknown, path: string, keys: Record<string, string>, problems: Problem[]): Row | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push({ where: path, message: 'an object is needed here' });
    return null;
  }
  const fields = new Map<string, string>();
  const where = new Map<string, string>();
  for (const [key, v] of Object.entries(value)) {
    const field = keys[key];
    if (field === undefined) {
      problems.push({ where: `${path}.${key}`, message: `not one of ${Object.keys(keys).join(', ')}` });
      continue;
    }
    where.set(field, `${path}.${key}`);
    if (field === 'names' && typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const entries = Object.entries(v).map(([lang, name]) => [lang, fieldText(name)] as const);
      if (entries.some(([, name]) => name === null || name.includes('|')))
        problems.push({ where: `${path}.${key}`, message: 'each name is text without |' });
      else fields.set(field, namesText(Object.fromEntries(entries) as Record<string, string>));
      continue;
    }
    const text = fieldText(v);
    if (text === null) problems.push({ where: `${path}.${key}`, message: 'text or a number is needed here' });
    else fields.set(field, text);
  }
  return { get: (f) => fields.get(f) ?? '', at: (f) => where.get(f) ?? `${path} (${f})` };
}

const PRODUCT_KEYS = { code: 'product', name: 'name', names: 'names', measurement: 'measurement', unit: 'unit' };
const SELECTION_KEYS = {
  selection: 'selection',
  product: 'product',
  capacity: 'capacity',
  par: 'par',
  threshold: 'threshold',
  price: 'price',
};

function listOf(doc: Record<string, unknown>, key: string, problems: Problem[]): unknown[] {
  const v = doc[key];
  if (v === undefined) return [];
  if (Array.isArray(v)) return v;
  problems.push({ where: key, message: 'a list is needed here' });
  return [];
}

function readJsonTemplates(b: SetBuilder, doc: Record<string, unknown>): void {
  listOf(doc, 'templates', b.problems).forEach((t, ti) => {
    const path = `templates[${ti}]`;
    const head = jsonRow(
      t === null || typeof t !== 'object' ? t : { ...t, selections: undefined },
      path,
      { template: 'template', model: 'model', selections: 'selections' },
      b.problems,
    );
    if (head === null) return;
    const r = new RowReader(head, b.problems);
    const templateId = r.take('template', (x) => codeOf(x, 'a template name'));
    const model = head.get('model') === '' ? '' : r.take('model', (x) => nameOf(x, 128));
    if (templateId === undefined || model === undefined) return;
    b.addTemplate(templateId, model, head);
    listOf(t as Record<string, unknown>, 'selections', b.problems).forEach((s, si) => {
      const row = jsonRow(s, `${path}.selections[${si}]`, SELECTION_KEYS, b.problems);
      const selection = row === null ? undefined : selectionFrom(new RowReader(row, b.problems));
      if (row !== null && selection !== undefined) b.addSelection(templateId, selection, row);
    });
  });
}

function readJsonMachines(b: SetBuilder, doc: Record<string, unknown>): void {
  listOf(doc, 'machines', b.problems).forEach((m, mi) => {
    const path = `machines[${mi}]`;
    const head = jsonRow(
      m === null || typeof m !== 'object' ? m : { ...m, overrides: undefined },
      path,
      { machine: 'machine', template: 'template', overrides: 'overrides' },
      b.problems,
    );
    if (head === null) return;
    const r = new RowReader(head, b.problems);
    const machineId = r.take('machine', machineIdOf);
    const templateId = r.take('template', (x) => codeOf(x, 'the template a machine runs'));
    if (machineId === undefined || templateId === undefined) return;
    b.addMachine(machineId, templateId, null, head);
    listOf(m as Record<string, unknown>, 'overrides', b.problems).forEach((o, oi) => {
      const row = jsonRow(o, `${path}.overrides[${oi}]`, SELECTION_KEYS, b.problems);
      const override = row === null ? undefined : overrideFrom(new RowReader(row, b.problems));
      if (row !== null && override !== undefined) b.addMachine(machineId, templateId, override, row);
    });
  });
}

/** A JSON planogram file: { products: [...], templates: [...], machines: [...] }. */
export function readPlanogramJson(text: string, known: Known): ParsedSet {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return refused([{ where: '(the file)', message: `not JSON: ${(err as Error).message.slice(0, 200)}` }]);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    return refused([{ where: '(the file)', message: 'an object with products, templates and machines is needed' }]);
  const b = new SetBuilder();
  const d = doc as Record<string, unknown>;
  for (const key of Object.keys(d))
    if (!['products', 'templates', 'machines'].includes(key))
      b.problems.push({ where: key, message: 'not one of products, templates, machines' });
  const rows = ['products', 'templates', 'machines'].reduce((n, k) => n + (Array.isArray(d[k]) ? d[k].length : 0), 0);
  if (rows > MAX_IMPORT_ROWS) return refused([{ where: '(the file)', message: `at most ${MAX_IMPORT_ROWS} items` }]);
  listOf(d, 'products', b.problems).forEach((p, i) => {
    const row = jsonRow(p, `products[${i}]`, { ...PRODUCT_KEYS, ageLimit: 'age_limit' }, b.problems);
    const product = row === null ? undefined : productFrom(new RowReader(row, b.problems), namesField);
    if (row !== null && product !== undefined) b.addProduct(product, row);
  });
  readJsonTemplates(b, d);
  readJsonMachines(b, d);
  return b.result(known);
}

/** Thousandths as decimal text: 1500 -> "1.50", 1505 -> "1.505". */
export function priceText(milli: number): string {
  const frac = String(milli % 1000).padStart(3, '0');
  return `${Math.trunc(milli / 1000)}.${frac.endsWith('0') ? frac.slice(0, 2) : frac}`;
}
const price = priceText;

/** The set as CSV (the columns above): template lines with their products, products alone, machines. */
export function writePlanogramCsv(set: PlanogramSet): string {
  const products = new Map(set.products.map((p) => [p.code, p]));
  const used = new Set<string>();
  const productCells = (code: string) => {
    const p = products.get(code);
    if (p === undefined || used.has(code)) return ['', '', '', '', ''];
    used.add(code);
    return [p.name, namesText(p.names), p.measurement, p.unit, p.ageLimit ?? ''];
  };
  const rows: unknown[][] = [];
  for (const t of set.templates)
    for (const s of t.selections)
      rows.push([
        t.templateId,
        t.model,
        '',
        s.selection,
        s.productCode,
        ...productCells(s.productCode),
        s.capacity,
        s.par,
        s.threshold,
        price(s.priceMilli),
      ]);
  for (const p of set.products)
    if (!used.has(p.code)) rows.push(['', '', '', '', p.code, ...productCells(p.code), '', '', '', '']);
  for (const m of set.machines) {
    rows.push([m.templateId, '', m.machineId, '', '', '', '', '', '', '', '', '', '', '']);
    for (const o of m.overrides)
      rows.push([
        m.templateId,
        '',
        m.machineId,
        o.selection,
        o.productCode ?? '',
        '',
        '',
        '',
        '',
        '',
        o.capacity ?? '',
        o.par ?? '',
        o.threshold ?? '',
        o.priceMilli === undefined ? '' : price(o.priceMilli),
      ]);
  }
  return csv([...CSV_COLUMNS], rows);
}

/** The set as JSON (prices as decimal text, so they stay exact). */
export function writePlanogramJson(set: PlanogramSet): string {
  const doc = {
    products: set.products.map((p) => ({ ...p })),
    templates: set.templates.map((t) => ({
      template: t.templateId,
      model: t.model,
      selections: t.selections.map(({ priceMilli, ...s }) => ({
        selection: s.selection,
        product: s.productCode,
        capacity: s.capacity,
        par: s.par,
        threshold: s.threshold,
        price: price(priceMilli),
      })),
    })),
    machines: set.machines.map((m) => ({
      machine: m.machineId,
      template: m.templateId,
      overrides: m.overrides.map((o) => ({
        selection: o.selection,
        ...(o.productCode === undefined ? {} : { product: o.productCode }),
        ...(o.capacity === undefined ? {} : { capacity: o.capacity }),
        ...(o.par === undefined ? {} : { par: o.par }),
        ...(o.threshold === undefined ? {} : { threshold: o.threshold }),
        ...(o.priceMilli === undefined ? {} : { price: price(o.priceMilli) }),
      })),
    })),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
