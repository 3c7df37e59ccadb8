/** The planograms page: templates, products, import and export; and one template's page. */
import type { Problem, Product, Template } from '../../route/planogram-rules.js';
import { namesText } from '../../route/planogram-rules.js';
import type { TemplateSummary } from '../../store/planogram-reads.js';
import { html, type Html } from '../html.js';
import { canPlan, csrfField, notice, price, stockLink, templateLink, timeText } from './route-kit.js';

export interface PlanogramsView {
  templates: TemplateSummary[];
  products: Product[];
  user: { role: string; csrf: string };
  message: string | null;
  problems: Problem[];
  /** What was sent to import when it was refused, to correct it. */
  importText: string;
}

function templatesTable(templates: TemplateSummary[]): Html {
  return html`<table class="list" id="templates">
    <thead>
      <tr>
        <th>template</th>
        <th>model</th>
        <th>selections</th>
        <th>machines</th>
        <th>changed</th>
      </tr>
    </thead>
    <tbody>
      ${templates.map(
        (t) =>
          html`<tr data-template="${t.templateId}">
            <td>${templateLink(t.templateId)}</td>
            <td>${t.model}</td>
            <td class="num">${t.selections}</td>
            <td class="num">${t.machines}</td>
            <td>${timeText(t.updatedAt)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function productsTable(products: Product[]): Html {
  return html`<table class="list" id="products">
    <thead>
      <tr>
        <th>code</th>
        <th>name</th>
        <th>other languages</th>
        <th>measurement</th>
        <th>age limit</th>
      </tr>
    </thead>
    <tbody>
      ${products.map(
        (p) =>
          html`<tr data-product="${p.code}">
            <td>${p.code}</td>
            <td>${p.name}</td>
            <td>${namesText(p.names)}</td>
            <td>${p.measurement} ${p.unit}</td>
            <td>${p.ageLimit ?? ''}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function planningForms(v: PlanogramsView): Html {
  return html`<h2>New template</h2>
    <form method="post" action="/planograms/templates" class="filters" id="new-template">
      ${csrfField(v.user.csrf)}
      <label>Template <input name="template" required maxlength="64" pattern="[A-Za-z0-9._\\-]{1,64}" /></label>
      <label>Model <input name="model" maxlength="128" /></label>
      <button type="submit">Create</button>
    </form>
    <h2>Add or change a product</h2>
    <form method="post" action="/planograms/products" class="filters" id="product-form">
      ${csrfField(v.user.csrf)}
      <label>Code <input name="product" required maxlength="64" /></label>
      <label>Name <input name="name" required maxlength="255" /></label>
      <label>Other languages <input name="names" maxlength="2000" placeholder="de=Wasser|fr=Eau" /></label>
      <label>Measurement <input name="measurement" inputmode="numeric" value="1" size="6" /></label>
      <label>Unit <input name="unit" value="Unit" maxlength="50" size="6" /></label>
      <label>Age limit <input name="age_limit" inputmode="numeric" size="4" /></label>
      <button type="submit">Save product</button>
    </form>
    <h2>Import</h2>
    <p>
      A CSV (a header line, then one line per template selection, product or machine: see docs/console.md, "Planogram
      files") or the JSON the export gives. A file with any problem is refused whole, each problem named.
    </p>
    <form method="post" action="/planograms/import" class="stack wide" id="import-form">
      ${csrfField(v.user.csrf)}
      <label
        >Format
        <select name="format">
          <option value="csv">CSV</option>
          <option value="json">JSON</option>
        </select></label
      >
      <label>A file <input type="file" accept=".csv,.json,text/csv,application/json" data-fills="import-text" /></label>
      <label>or its text <textarea name="text" id="import-text" rows="8" required>${v.importText}</textarea></label>
      <button type="submit">Import</button>
    </form>`;
}

export function planogramsBody(v: PlanogramsView): Html {
  return html`${notice(v.message, v.problems)}
    <p class="actions">
      Export: <a href="/planograms/export.csv" id="export-csv">CSV</a> ·
      <a href="/planograms/export.json" id="export-json">JSON</a>
    </p>
    <h2>Templates</h2>
    ${v.templates.length === 0 ? html`<p class="empty">No template yet.</p>` : templatesTable(v.templates)}
    <h2>Products</h2>
    ${v.products.length === 0 ? html`<p class="empty">No product yet.</p>` : productsTable(v.products)}
    ${canPlan(v.user.role) ? planningForms(v) : html``}`;
}

export interface TemplateView {
  template: Template;
  machines: string[];
  machineCount: number;
  products: Product[];
  user: { role: string; csrf: string };
  message: string | null;
  problems: Problem[];
}

/** Blank lines to add selections with. */
const NEW_LINES = 4;

function selectionInputs(i: number, s: Template['selections'][number] | null): Html {
  const v = (x: number | string | undefined) => (s === null ? '' : String(x ?? ''));
  return html`<tr>
    <td><input name="s${i}_selection" value="${v(s?.selection)}" inputmode="numeric" size="5" /></td>
    <td><input name="s${i}_product" value="${v(s?.productCode)}" list="product-codes" size="12" /></td>
    <td><input name="s${i}_capacity" value="${v(s?.capacity)}" inputmode="numeric" size="5" /></td>
    <td><input name="s${i}_par" value="${v(s?.par)}" inputmode="numeric" size="5" /></td>
    <td><input name="s${i}_threshold" value="${v(s?.threshold)}" inputmode="numeric" size="5" /></td>
    <td><input name="s${i}_price" value="${s === null ? '' : price(s.priceMilli)}" inputmode="decimal" size="7" /></td>
  </tr>`;
}

function templateEditor(v: TemplateView): Html {
  const rows = [...v.template.selections, ...Array<null>(NEW_LINES).fill(null)];
  return html`<form
    method="post"
    action="/planograms/templates/${encodeURIComponent(v.template.templateId)}"
    id="template-form"
  >
    ${csrfField(v.user.csrf)}
    <label class="inline-label">Model <input name="model" value="${v.template.model}" maxlength="128" /></label>
    <datalist id="product-codes">${v.products.map((p) => html`<option value="${p.code}">${p.name}</option>`)}</datalist>
    <div class="scroll">
      <table class="list edit" id="template-selections">
        <thead>
          <tr>
            <th>selection</th>
            <th>product</th>
            <th>capacity</th>
            <th>par</th>
            <th>threshold</th>
            <th>price</th>
          </tr>
        </thead>
        <tbody>
          ${rows.map((s, i) => selectionInputs(i, s))}
        </tbody>
      </table>
    </div>
    <input type="hidden" name="lines" value="${rows.length}" />
    <p class="hint">Clear a line's selection to remove it; fill a blank line to add one.</p>
    <button type="submit" id="template-save">Save template</button>
  </form>`;
}

function templateTable(v: TemplateView): Html {
  const names = new Map(v.products.map((p) => [p.code, p.name]));
  return html`<table class="list" id="template-selections">
    <thead>
      <tr>
        <th>selection</th>
        <th>product</th>
        <th>capacity</th>
        <th>par</th>
        <th>threshold</th>
        <th>price</th>
      </tr>
    </thead>
    <tbody>
      ${v.template.selections.map(
        (s) =>
          html`<tr>
            <td class="num">${s.selection}</td>
            <td>${s.productCode} ${names.get(s.productCode) ?? ''}</td>
            <td class="num">${s.capacity}</td>
            <td class="num">${s.par}</td>
            <td class="num">${s.threshold}</td>
            <td class="num">${price(s.priceMilli)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

export function templateBody(v: TemplateView): Html {
  const plan = canPlan(v.user.role);
  const id = encodeURIComponent(v.template.templateId);
  return html`${notice(v.message, v.problems)}
    <p>Model: <strong>${v.template.model}</strong></p>
    ${plan ? templateEditor(v) : templateTable(v)}
    <h2>Machines running it (${v.machineCount})</h2>
    <p id="template-machines">
      ${v.machines.map((m) => html`${stockLink(m)} `)}${v.machineCount > v.machines.length ? html`...` : html``}
    </p>
    ${
      plan
        ? html`<h2>Apply to machines</h2>
            <form method="post" action="/planograms/templates/${id}/apply" class="stack wide" id="apply-form">
              ${csrfField(v.user.csrf)}
              <label
                >Machine ids (one a line, or split by commas or spaces)
                <textarea name="machines" rows="3" required></textarea>
              </label>
              <p class="hint">A machine that ran another template loses its own values.</p>
              <button type="submit" id="apply-submit">Apply</button>
            </form>`
        : html``
    }`;
}
