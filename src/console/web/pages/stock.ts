/** The stock pages: the fleet's machines summed up, one machine's selections, the "price differs" list. */
import type { PriceDiffers } from '../../store/route-queries.js';
import type { MachineStock, MachineStockSummary, StockLine } from '../../store/stock-reads.js';
import { html, pager, type Html } from '../html.js';
import { PRICE_FLAG, daysText, machineLink, price, stockLink, templateLink, timeText, visitLink } from './route-kit.js';

export interface FleetStockView {
  rows: MachineStockSummary[];
  total: number;
  page: number;
  pageSize: number;
  q: string;
  pricesDiffer: number;
}

export function fleetStockBody(v: FleetStockView): Html {
  return html`<form method="get" action="/stock" class="filters">
      <label>Search <input type="search" name="q" value="${v.q}" maxlength="128" placeholder="machine id" /></label>
      <button type="submit">Apply</button>
    </form>
    <section id="live">
      <p class="counts">
        ${
          v.pricesDiffer > 0
            ? html`<a href="/prices" id="prices-flag">${PRICE_FLAG} on ${v.pricesDiffer} selections</a>`
            : html`<span id="prices-flag">Every asked price is the planogram's.</span>`
        }
        · <a href="/routes">which machines need a visit</a>
      </p>
      <div class="scroll">
        <table class="list" id="fleet-stock">
          <thead>
            <tr>
              <th>machine</th>
              <th>template</th>
              <th>selections</th>
              <th>below threshold</th>
              <th>soonest empty (days)</th>
              <th>prices</th>
              <th>last fill</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            ${v.rows.map(
              (m) =>
                html`<tr data-machine="${m.machineId}" class="${m.below > 0 ? 'low' : ''}">
                  <td>${stockLink(m.machineId)}</td>
                  <td>${templateLink(m.templateId)}</td>
                  <td class="num">${m.selections}</td>
                  <td class="num${m.below > 0 ? ' bad' : ''}">${m.below}</td>
                  <td class="num">${daysText(m.soonestEmptyDays)}</td>
                  <td>${m.pricesDiffer > 0 ? PRICE_FLAG : html``}</td>
                  <td>${timeText(m.lastFillAt)}</td>
                  <td>${visitLink(m.machineId)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${pager('/stock', new URLSearchParams({ q: v.q }), v.page, v.pageSize, v.total)}
    </section>`;
}

function levelBar(l: StockLine): Html {
  if (l.capacity === null || l.capacity <= 0) return html``;
  const pct = Math.max(0, Math.min(100, Math.round((Math.max(0, l.level) / l.capacity) * 10) * 10));
  return html`<span class="bar bar-${pct}${l.threshold !== null && l.level < l.threshold ? ' low' : ''}"></span>`;
}

function auditCell(l: StockLine): Html {
  if (l.audit === null) return html``;
  const a = l.audit;
  const cls = a.dexVends === a.ourVends ? '' : 'bad';
  return html`<span class="${cls}" title="read ${a.at}">DEX ${a.dexVends} / ours ${a.ourVends}</span>`;
}

function stockRow(l: StockLine): Html {
  const differs = l.askedMilli !== null && l.intendedMilli !== null && l.askedMilli !== l.intendedMilli;
  const low = l.threshold !== null && l.level < l.threshold;
  return html`<tr data-selection="${l.selection}" class="${l.productCode === null ? 'unplanned' : low ? 'low' : ''}">
    <td class="num">${l.selection}</td>
    <td>${l.productCode ?? html`<em>not in the planogram</em>`}</td>
    <td class="num level">${l.level}</td>
    <td>${levelBar(l)}</td>
    <td class="num">${l.capacity ?? ''} / ${l.par ?? ''} / ${l.threshold ?? ''}</td>
    <td class="num">${l.ratePerDay.toFixed(1)}</td>
    <td class="num days">${daysText(l.daysToEmpty)}</td>
    <td class="num">${price(l.intendedMilli)}</td>
    <td class="num">${price(l.askedMilli)} ${differs ? PRICE_FLAG : html``}</td>
    <td>${auditCell(l)}</td>
  </tr>`;
}

export function machineStockBody(s: MachineStock): Html {
  const id = encodeURIComponent(s.machineId);
  return html`<p class="actions">
      ${visitLink(s.machineId, 'Visit page')} · <a href="/machines/${id}/planogram">planogram</a> ·
      ${machineLink(s.machineId)}
    </p>
    <section id="live">
      <div class="scroll">
        <table class="list" id="machine-stock">
          <thead>
            <tr>
              <th>selection</th>
              <th>product</th>
              <th>level</th>
              <th></th>
              <th>capacity / par / threshold</th>
              <th>sold a day</th>
              <th>days to empty</th>
              <th>price</th>
              <th>VMC asked</th>
              <th>last audit</th>
            </tr>
          </thead>
          <tbody>
            ${s.lines.map(stockRow)}
          </tbody>
        </table>
      </div>
      <p class="hint">
        The level is set by a fill and lowered by every sale the console hears of; a DEX audit counts what else left the
        machine (coins, another reader): "DEX / ours" is its count against ours over its interval, and the difference is
        taken off the level.
      </p>
      <h2>Fills</h2>
      ${
        s.fills.length === 0
          ? html`<p class="empty">No fill recorded yet.</p>`
          : html`<table class="list" id="fills">
              <thead>
                <tr>
                  <th>at</th>
                  <th>by</th>
                  <th>counts</th>
                  <th>note</th>
                </tr>
              </thead>
              <tbody>
                ${s.fills.map(
                  (f) =>
                    html`<tr>
                      <td>${timeText(f.at)}</td>
                      <td>${f.by}</td>
                      <td>
                        ${Object.entries(f.counts)
                          .map(([k, n]) => `${k}: ${n}`)
                          .join(', ')}
                      </td>
                      <td>${f.note}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
    </section>`;
}

export function pricesBody(rows: PriceDiffers[]): Html {
  return html`<p>
      Selections whose VMC asks another price than the planogram's (the VMC sets the price of each vend: fix it at the
      machine, or change the planogram).
    </p>
    <section id="live">
      ${
        rows.length === 0
          ? html`<p class="empty" id="prices-none">Every asked price is the planogram's.</p>`
          : html`<table class="list" id="prices">
              <thead>
                <tr>
                  <th>machine</th>
                  <th>selection</th>
                  <th>planogram</th>
                  <th>VMC asked</th>
                  <th>asked at</th>
                </tr>
              </thead>
              <tbody>
                ${rows.map(
                  (r) =>
                    html`<tr data-machine="${r.machineId}">
                      <td>${stockLink(r.machineId)}</td>
                      <td class="num">${r.selection}</td>
                      <td class="num">${price(r.intendedMilli)}</td>
                      <td class="num bad">${price(r.askedMilli)} ${PRICE_FLAG}</td>
                      <td>${timeText(r.askedAt)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
    </section>`;
}
