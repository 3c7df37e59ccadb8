/** The fleet overview and the machine page. */
import { adviceFor } from '../alarm-advice.js';
import { html, money, pageParam, pager, type Html } from '../html.js';
import { OVERVIEW_FILTERS, outOfOrderReason, type FleetCounts, type MachinePage, type OverviewFilter } from '../../store/page-queries.js';
import type { MachinesTable } from '../../store/schema.js';

export function overviewQuery(params: URLSearchParams, pageSize: number) {
  const f = params.get('filter') ?? 'all';
  const filter: OverviewFilter = (OVERVIEW_FILTERS as readonly string[]).includes(f) ? (f as OverviewFilter) : 'all';
  return { filter, search: (params.get('q') ?? '').slice(0, 128), page: pageParam(params.get('page')), pageSize };
}

function machineRow(m: MachinesTable): Html {
  const reason = outOfOrderReason(m);
  const link = `/machines/${encodeURIComponent(m.machine_id)}`;
  return html`<tr class="${reason === null ? 'ok' : 'down'}" data-machine="${m.machine_id}">
<td><a href="${link}">${m.machine_id}</a></td><td>${m.online === 1 ? 'online' : 'offline'}</td><td>${m.reader ?? ''}</td>
<td class="why">${reason ?? ''}</td><td>${m.gateway ?? ''}</td><td class="num">${m.outbox_pending}</td>
<td class="num${m.outbox_dead > 0 ? ' bad' : ''}">${m.outbox_dead}</td><td>${m.version ?? ''}</td><td>${m.last_sale_at ?? ''}</td>
<td class="alarms">${m.alarms.split(',').filter((a) => a !== '').join(' ')}</td></tr>`;
}

export function overviewBody(
  counts: FleetCounts,
  result: { rows: MachinesTable[]; total: number },
  q: ReturnType<typeof overviewQuery>,
): Html {
  const params = new URLSearchParams({ filter: q.filter, q: q.search });
  const options = OVERVIEW_FILTERS.map((f) => html`<option value="${f}"${f === q.filter ? html` selected` : html``}>${f}</option>`);
  return html`<form method="get" action="/" class="filters">
<label>Show <select name="filter">${options}</select></label>
<label>Search <input type="search" name="q" value="${q.search}" maxlength="128" placeholder="machine or terminal id"></label>
<button type="submit">Apply</button></form>
<section id="live"><p class="counts"><span id="count-machines">${counts.machines} machines</span>,
<span id="count-online">${counts.online} online</span>, <span id="count-down">${counts.outOfOrder} cannot sell</span>,
<span id="count-alarmed">${counts.alarmed} with alarms</span></p>
<table class="list" id="machines"><thead><tr><th>machine</th><th>link</th><th>reader</th><th>out of order</th><th>gateway</th>
<th>outbox pending</th><th>dead</th><th>version</th><th>last sale</th><th>alarms</th></tr></thead>
<tbody>${result.rows.map(machineRow)}</tbody></table>
${pager('/', params, q.page, q.pageSize, result.total)}</section>`;
}

export function machineBody(p: MachinePage): Html {
  const m = p.machine;
  const reason = outOfOrderReason(m);
  return html`<section id="live"><dl class="facts">
<dt>link</dt><dd id="machine-online">${m.online === 1 ? 'online' : 'offline'}</dd>
<dt>can sell</dt><dd>${reason === null ? 'yes' : html`<span class="bad">no: ${reason}</span>`}</dd>
<dt>terminal</dt><dd>${m.terminal_id ?? ''}</dd><dt>reader</dt><dd>${m.reader ?? ''}</dd>
<dt>gateway</dt><dd>${m.gateway ?? ''}</dd><dt>outbox</dt><dd>${m.outbox_pending} pending, ${m.outbox_dead} dead</dd>
<dt>version</dt><dd>${m.version ?? ''}</dd><dt>update</dt><dd>${m.update_state ?? ''} ${m.update_version ?? ''}</dd>
<dt>last status</dt><dd>${m.status_at ?? ''}</dd><dt>last health</dt><dd>${m.health_at ?? ''}</dd></dl>
<h2>Alarms</h2><table class="list" id="machine-alarms"><thead><tr><th>code</th><th>raised</th><th>detail</th><th>cleared</th><th>advice</th></tr></thead>
<tbody>${p.alarms.map((a) => html`<tr class="${a.cleared_at === null ? 'open' : 'cleared'}"><td>${a.code}</td><td>${a.raised_at}</td>
<td>${a.raised_detail ?? ''}</td><td>${a.cleared_at ?? 'open'}</td><td>${adviceFor(a.code)}</td></tr>`)}</tbody></table>
<h2>Sales</h2><table class="list" id="machine-sales"><thead><tr><th>at</th><th>kind</th><th>amount</th><th>closing</th><th>verdict</th><th>tx</th></tr></thead>
<tbody>${p.sales.map((s) => html`<tr${s.verdict === 'dead-letter' ? html` class="bad"` : html``}><td>${s.at}</td><td>${s.kind}</td>
<td class="num">${money(Number(s.amount_milli))} ${s.currency}</td><td>${s.closing ?? ''}</td><td>${s.verdict ?? ''}</td><td>${s.tx_id ?? ''}</td></tr>`)}</tbody></table>
<h2>Audits</h2><table class="list"><thead><tr><th>at</th><th>check</th><th>verdict</th><th>difference</th><th>message</th></tr></thead>
<tbody>${p.audits.map((a) => html`<tr><td>${a.at}</td><td>${a.check_ok === null ? '' : a.check_ok === 1 ? 'ok' : 'failed'}</td>
<td class="${a.verdict === 'mismatch' ? 'bad' : ''}">${a.verdict}</td><td class="num">${a.difference ?? ''}</td><td>${a.message ?? ''}</td></tr>`)}</tbody></table>
<h2>Updates</h2><table class="list"><thead><tr><th>at</th><th>version</th><th>state</th><th>running</th><th>detail</th></tr></thead>
<tbody>${p.updates.map((u) => html`<tr><td>${u.at}</td><td>${u.version}</td><td>${u.state}</td><td>${u.running}</td><td>${u.detail ?? ''}</td></tr>`)}</tbody></table>
<h2>Status history</h2><table class="list"><thead><tr><th>received</th><th>link</th><th>reader</th><th>gateway</th><th>outbox</th>
<th>version</th><th>alarms</th></tr></thead>
<tbody>${p.history.map((h) => html`<tr><td>${h.received_at}</td><td>${h.online === 1 ? 'online' : 'offline'}</td><td>${h.reader ?? ''}</td>
<td>${h.gateway ?? ''}</td><td>${h.outbox_pending}/${h.outbox_dead}</td><td>${h.version ?? ''}</td><td>${h.alarms}</td></tr>`)}</tbody></table></section>`;
}
