/** One machine's planogram: its template's values, its own over them, and a form to set its own. */
import type { Problem } from '../../route/planogram-rules.js';
import type { MachinePlanogram } from '../../store/planogram-reads.js';
import { html, type Html } from '../html.js';
import { canPlan, csrfField, notice, price, stockLink, templateLink } from './route-kit.js';

export interface MachinePlanogramView {
  plan: MachinePlanogram;
  user: { role: string; csrf: string };
  message: string | null;
  problems: Problem[];
}

/** A value with the template's beside it when the machine has its own. */
function cell(own: number | string | undefined, base: number | string): Html {
  if (own === undefined || own === base) return html`${base}`;
  return html`<strong class="own">${own}</strong> <span class="muted">(template ${base})</span>`;
}

function rowsTable(v: MachinePlanogramView): Html {
  const { plan } = v;
  return html`<table class="list" id="machine-planogram">
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
      ${plan.rows.map(({ template: t, own }) => {
        const code = own?.productCode ?? t.productCode;
        return html`<tr data-selection="${t.selection}" class="${own === null ? '' : 'has-own'}">
          <td class="num">${t.selection}</td>
          <td>${cell(own?.productCode, t.productCode)} ${plan.products.get(code)?.name ?? ''}</td>
          <td class="num">${cell(own?.capacity, t.capacity)}</td>
          <td class="num">${cell(own?.par, t.par)}</td>
          <td class="num">${cell(own?.threshold, t.threshold)}</td>
          <td class="num">
            ${cell(own?.priceMilli === undefined ? undefined : price(own.priceMilli), price(t.priceMilli))}
          </td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

function ownForm(v: MachinePlanogramView): Html {
  return html`<h2>This machine's own values</h2>
    <p class="hint">Leave a value empty for the template's; all empty gives the selection back to the template.</p>
    <form
      method="post"
      action="/machines/${encodeURIComponent(v.plan.machineId)}/planogram"
      class="filters"
      id="override-form"
    >
      ${csrfField(v.user.csrf)}
      <label>Selection <input name="selection" required inputmode="numeric" size="5" /></label>
      <label>Product <input name="product" size="10" /></label>
      <label>Capacity <input name="capacity" inputmode="numeric" size="5" /></label>
      <label>Par <input name="par" inputmode="numeric" size="5" /></label>
      <label>Threshold <input name="threshold" inputmode="numeric" size="5" /></label>
      <label>Price <input name="price" inputmode="decimal" size="7" /></label>
      <button type="submit">Save</button>
    </form>`;
}

export function machinePlanogramBody(v: MachinePlanogramView): Html {
  const { plan } = v;
  if (plan.templateId === null)
    return html`${notice(v.message, v.problems)}
      <p class="empty">No planogram: apply a template to this machine on its template's page (Planograms).</p>`;
  return html`${notice(v.message, v.problems)}
    <p>
      Runs template ${templateLink(plan.templateId)} (${plan.model}) · ${stockLink(plan.machineId, 'stock')} ·
      <a href="/machines/${encodeURIComponent(plan.machineId)}">machine</a>
    </p>
    ${rowsTable(v)} ${canPlan(v.user.role) ? ownForm(v) : html``}`;
}
