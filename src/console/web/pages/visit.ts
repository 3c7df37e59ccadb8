/**
 * The driver's visit page, made for a phone first (a 390 px screen, thumbs): the machine's
 * selections, each with what it holds, its par and what to put in; the count after the fill
 * already at par, so one tap records the fill ("Record the fill"), or "Filled to par" does
 * without reading the counts; a note. Each fill is kept with who and when (the stock page lists them).
 */
import type { StockLine } from '../../store/stock-reads.js';
import { html, type Html } from '../html.js';
import { canPlan, csrfField, stockLink, timeText } from './route-kit.js';

export interface VisitView {
  machineId: string;
  lines: StockLine[];
  names: Map<string, string>;
  lastFill: { at: string; by: string } | null;
  user: { role: string; csrf: string };
  message: string | null;
  error: boolean;
  /** Counts sent with a refused fill, shown again to correct. */
  sent: Record<string, string>;
  note: string;
}

function selectionCard(l: StockLine, v: VisitView): Html {
  const par = l.par ?? 0;
  const putIn = Math.max(0, par - Math.max(0, l.level));
  const value = v.sent[`c${l.selection}`] ?? String(par);
  const low = l.threshold !== null && l.level < l.threshold;
  return html`<li class="sel${low ? ' low' : ''}" data-selection="${l.selection}">
    <div class="sel-head">
      <span class="sel-no">${l.selection}</span>
      <span class="sel-name">${v.names.get(l.productCode ?? '') ?? l.productCode}</span>
    </div>
    <div class="sel-figures">
      <span>now <strong class="level">${l.level}</strong></span>
      <span>par ${par}</span>
      <span class="put-in">put in <strong>${putIn}</strong></span>
    </div>
    <label class="count"
      >count after the fill
      <input
        type="number"
        name="c${l.selection}"
        value="${value}"
        min="0"
        max="${l.capacity ?? ''}"
        inputmode="numeric"
        required
    /></label>
  </li>`;
}

export function visitBody(v: VisitView): Html {
  const planned = v.lines.filter((l) => l.productCode !== null);
  const id = encodeURIComponent(v.machineId);
  const head = html`${
      v.message === null
        ? html``
        : html`<p class="${v.error ? 'error' : 'notice'} visit-notice" id="notice">${v.message}</p>`
    }
    <p class="visit-meta">
      ${v.lastFill === null ? 'Never filled yet.' : html`Last fill ${timeText(v.lastFill.at)} by ${v.lastFill.by}.`}
      ${stockLink(v.machineId, 'Stock')}
    </p>`;
  if (planned.length === 0)
    return html`${head}
      <p class="empty">No planogram: a planner applies a template to this machine first.</p>`;
  if (!canPlan(v.user.role))
    return html`${head}
      <p class="empty">Fills are recorded by a planner or an admin: this account can only read.</p>`;
  return html`${head}
    <form method="post" action="/visit/${id}" class="visit" id="visit-form">
      ${csrfField(v.user.csrf)}
      <button type="submit" name="mode" value="par" class="big" id="fill-par" formnovalidate>Filled to par</button>
      <ol class="selections">
        ${planned.map((l) => selectionCard(l, v))}
      </ol>
      <label class="note">Note <textarea name="note" rows="2" maxlength="500">${v.note}</textarea></label>
      <button type="submit" name="mode" value="counts" class="big primary" id="fill-record">Record the fill</button>
    </form>`;
}
