/**
 * Builds a planogram set from the rows of a file (CSV lines or JSON objects), remembering where
 * each item came from so that every problem, of a field or of the set as a whole, names its place.
 * A file with any problem gives no set at all: an import is all or nothing.
 */
import {
  crossCheck,
  type Known,
  type MachinePlan,
  type Override,
  type PlanogramSet,
  type Problem,
  type Product,
  type Template,
  type TemplateSelection,
} from './planogram-rules.js';
import type { Row } from './planogram-fields.js';

export type ParsedSet = { ok: true; set: PlanogramSet } | { ok: false; problems: Problem[] };

/** At most this many rows (CSV lines, or products + selections + overrides in JSON) in one import. */
export const MAX_IMPORT_ROWS = 20_000;

const sameProduct = (a: Product, b: Product) => JSON.stringify(a) === JSON.stringify(b);

export class SetBuilder {
  readonly problems: Problem[] = [];
  private readonly products = new Map<string, { product: Product; row: Row }>();
  private readonly templates = new Map<string, { template: Template; rows: Row[]; modelRow: Row | null }>();
  private readonly machines = new Map<string, { plan: MachinePlan; row: Row; rows: Row[] }>();

  addProduct(product: Product, row: Row): void {
    const seen = this.products.get(product.code);
    if (seen === undefined) this.products.set(product.code, { product, row });
    else if (!sameProduct(seen.product, product))
      this.problems.push({
        where: row.at('name'),
        message: `product ${product.code} is defined differently at ${seen.row.at('product')}`,
      });
  }

  addTemplate(templateId: string, model: string, row: Row): void {
    const seen = this.templates.get(templateId);
    if (seen === undefined) {
      const template = { templateId, model, selections: [] };
      this.templates.set(templateId, { template, rows: [], modelRow: model === '' ? null : row });
    } else if (model !== '') {
      if (seen.modelRow !== null && seen.template.model !== model)
        this.problems.push({
          where: row.at('model'),
          message: `template ${templateId} is model "${seen.template.model}" at ${seen.modelRow.at('model')}`,
        });
      else if (seen.modelRow === null) {
        seen.template.model = model;
        seen.modelRow = row;
      }
    }
  }

  addSelection(templateId: string, selection: TemplateSelection, row: Row): void {
    const t = this.templates.get(templateId);
    if (t === undefined) throw new Error('addTemplate first');
    const twice = t.template.selections.findIndex((s) => s.selection === selection.selection);
    if (twice >= 0) {
      const first = t.rows[twice]!.at('selection');
      const message = `selection ${selection.selection} of template ${templateId} is given at ${first} already`;
      this.problems.push({ where: row.at('selection'), message });
      return;
    }
    t.template.selections.push(selection);
    t.rows.push(row);
  }

  addMachine(machineId: string, templateId: string, override: Override | null, row: Row): void {
    let m = this.machines.get(machineId);
    if (m === undefined) {
      m = { plan: { machineId, templateId, overrides: [] }, row, rows: [] };
      this.machines.set(machineId, m);
    } else if (m.plan.templateId !== templateId) {
      this.problems.push({
        where: row.at('template'),
        message: `machine ${machineId} runs template ${m.plan.templateId} at ${m.row.at('template')}`,
      });
      return;
    }
    if (override === null) return;
    if (m.plan.overrides.some((o) => o.selection === override.selection)) {
      this.problems.push({ where: row.at('selection'), message: `selection ${override.selection} is given twice` });
      return;
    }
    m.plan.overrides.push(override);
    m.rows.push(row);
  }

  /** The set, checked as a whole against what the database already holds; or every problem found. */
  result(known: Known): ParsedSet {
    const templates = [...this.templates.values()];
    const machines = [...this.machines.values()];
    const set: PlanogramSet = {
      products: [...this.products.values()].map((p) => p.product),
      templates: templates.map((t) => t.template),
      machines: machines.map((m) => m.plan),
    };
    const problems = [
      ...this.problems,
      ...crossCheck(set, known, {
        template: (ti, si, column) => templates[ti]!.rows[si]!.at(column),
        machine: (mi, oi, column) => (oi === null ? machines[mi]!.row : machines[mi]!.rows[oi]!).at(column),
      }),
    ];
    // In the order of the file's lines (a CSV's); JSON paths stay in the order found.
    const line = (p: Problem) => Number(/^line (\d+)/.exec(p.where)?.[1] ?? Infinity);
    problems.sort((a, b) => line(a) - line(b) || 0);
    return problems.length === 0 ? { ok: true, set } : { ok: false, problems };
  }
}
