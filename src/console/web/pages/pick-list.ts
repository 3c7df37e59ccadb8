/**
 * The pick list of a route's day: per product how many to bring (the machines that need a visit,
 * par minus the level predicted at the visit, summed), then each stop in visit order with what
 * goes into each selection. Made to print on A4 (the stylesheet's print rules hide the rest of the
 * console); also as CSV.
 */
import type { Product } from '../../route/planogram-rules.js';
import type { RouteDay } from '../../store/route-store.js';
import { csv } from '../csv.js';
import { html, type Html } from '../html.js';
import { dayText, timeText } from './route-kit.js';

function stops(r: RouteDay, names: Map<string, string>): Html {
  const visited = r.machines.filter((m) => m.needs !== null);
  return html`${visited.map(
    (m, i) =>
      html`<section class="stop" data-machine="${m.machineId}">
        <h3>${i + 1}. ${m.machineId}</h3>
        <table class="list pick-stop">
          <thead>
            <tr>
              <th>selection</th>
              <th>product</th>
              <th>now</th>
              <th>par</th>
              <th>bring</th>
              <th class="tick">done</th>
            </tr>
          </thead>
          <tbody>
            ${m.selections
              .filter((s) => s.bring > 0)
              .map(
                (s) =>
                  html`<tr>
                    <td class="num">${s.selection}</td>
                    <td>${names.get(s.productCode) ?? s.productCode}</td>
                    <td class="num">${s.level}</td>
                    <td class="num">${s.par}</td>
                    <td class="num strong">${s.bring}</td>
                    <td class="tick"></td>
                  </tr>`,
              )}
          </tbody>
        </table>
      </section>`,
  )}`;
}

export function pickListBody(r: RouteDay, products: Product[], day: string, nowIso: string): Html {
  const names = new Map(products.map((p) => [p.code, p.name]));
  const id = encodeURIComponent(r.routeId);
  const visited = r.machines.filter((m) => m.needs !== null).length;
  const total = r.pick.reduce((n, l) => n + l.quantity, 0);
  return html`<p class="meta">
      ${dayText(r.dayMs)} · ${visited} of ${r.machines.length} machines to visit · ${total} items · made
      ${timeText(nowIso)}
    </p>
    <p class="actions no-print">
      <button type="button" data-print="1" id="print">Print</button>
      <a href="/routes/${id}/pick.csv?day=${day}" id="pick-csv">CSV</a> ·
      <a href="/routes/${id}?day=${day}">the route</a>
    </p>
    <section id="live">
      <table class="list" id="pick">
        <thead>
          <tr>
            <th>product</th>
            <th>name</th>
            <th>bring</th>
            <th>selections</th>
            <th class="tick">packed</th>
          </tr>
        </thead>
        <tbody>
          ${r.pick.map(
            (l) =>
              html`<tr data-product="${l.productCode}">
                <td>${l.productCode}</td>
                <td>${names.get(l.productCode) ?? ''}</td>
                <td class="num strong">${l.quantity}</td>
                <td class="num">${l.selections}</td>
                <td class="tick"></td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${r.pick.length === 0 ? html`<p class="empty">Nothing to bring: no machine of the route needs a visit.</p>` : ''}
      <h2>Stops</h2>
      ${stops(r, names)}
    </section>`;
}

export function pickListCsv(r: RouteDay, products: Product[]): string {
  const names = new Map(products.map((p) => [p.code, p.name]));
  return csv(
    ['product', 'name', 'quantity', 'selections'],
    r.pick.map((l) => [l.productCode, names.get(l.productCode) ?? '', l.quantity, l.selections]),
  );
}
