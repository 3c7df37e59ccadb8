/** The fleet overview and the machine page. */
import { adviceHtml } from '../alarm-advice.js';
import { html, listTable, money, pageParam, pager, timeHtml, type Html } from '../html.js';
import {
  OVERVIEW_FILTERS,
  outOfOrderReason,
  type FleetCounts,
  type MachinePage,
  type OverviewFilter,
} from '../../store/page-queries.js';
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
    <td><a href="${link}">${m.machine_id}</a></td>
    <td>${m.online === 1 ? 'online' : 'offline'}</td>
    <td>${m.reader ?? ''}</td>
    <td class="why">${reason ?? ''}</td>
    <td>${m.gateway ?? ''}</td>
    <td class="num">${m.outbox_pending}</td>
    <td class="num${m.outbox_dead > 0 ? ' bad' : ''}">${m.outbox_dead}</td>
    <td>${m.version ?? ''}</td>
    <td>${timeHtml(m.last_sale_at)}</td>
    <td class="alarms">
      ${m.alarms
        .split(',')
        .filter((a) => a !== '')
        .join(' ')}
    </td>
  </tr>`;
}

export function overviewBody(
  counts: FleetCounts,
  result: { rows: MachinesTable[]; total: number },
  q: ReturnType<typeof overviewQuery>,
): Html {
  const params = new URLSearchParams({ filter: q.filter, q: q.search });
  const options = OVERVIEW_FILTERS.map(
    (f) => html`<option value="${f}" ${f === q.filter ? html` selected` : html``}>${f}</option>`,
  );
  return html`<form method="get" action="/" class="filters">
      <label
        >Show
        <select name="filter">
          ${options}
        </select></label
      >
      <label
        >Search <input type="search" name="q" value="${q.search}" maxlength="128" placeholder="machine or terminal id"
      /></label>
      <button type="submit">Apply</button>
    </form>
    <section id="live">
      <p class="counts">
        <span id="count-machines">${counts.machines} machines</span>,
        <span id="count-online">${counts.online} online</span>,
        <span id="count-down">${counts.outOfOrder} cannot sell</span>,
        <span id="count-alarmed">${counts.alarmed} with alarms</span>
      </p>
      <table class="list" id="machines">
        <thead>
          <tr>
            <th>machine</th>
            <th>link</th>
            <th>reader</th>
            <th>out of order</th>
            <th>gateway</th>
            <th>outbox pending</th>
            <th>dead</th>
            <th>version</th>
            <th>last sale</th>
            <th>alarms</th>
          </tr>
        </thead>
        <tbody>
          ${result.rows.map(machineRow)}
        </tbody>
      </table>
      ${pager('/', params, q.page, q.pageSize, result.total)}
    </section>`;
}

function machineFacts(m: MachinePage['machine']): Html {
  const reason = outOfOrderReason(m);
  const facts: [string, unknown][] = [
    ['link', m.online === 1 ? 'online' : 'offline'],
    ['can sell', reason === null ? 'yes' : html`<span class="bad">no: ${reason}</span>`],
    ['terminal', m.terminal_id],
    ['reader', m.reader],
    ['gateway', m.gateway],
    ['outbox', `${m.outbox_pending} pending, ${m.outbox_dead} dead`],
    ['version', m.version],
    ['update', `${m.update_state ?? ''} ${m.update_version ?? ''}`],
    ['last status', timeHtml(m.status_at)],
    ['last health', timeHtml(m.health_at)],
  ];
  return html`<dl class="facts">
    ${facts.map(
      ([k, v]) =>
        html`<dt>${k}</dt>
          <dd>${v}</dd>`,
    )}
  </dl>`;
}

export function machineBody(p: MachinePage): Html {
  const check = (ok: number | null) => (ok === null ? '' : ok === 1 ? 'ok' : 'failed');
  return html`<section id="live">
    ${machineFacts(p.machine)}
    <h2>Alarms</h2>
    ${listTable(
      'machine-alarms',
      ['code', 'raised', 'detail', 'cleared', 'advice'],
      p.alarms.map((a) => ({
        cls: a.cleared_at === null ? 'open' : 'cleared',
        cells: [
          a.code,
          timeHtml(a.raised_at),
          a.raised_detail,
          a.cleared_at === null ? 'open' : timeHtml(a.cleared_at),
          adviceHtml(a.code),
        ],
      })),
    )}
    <h2>Sales</h2>
    ${listTable(
      'machine-sales',
      ['at', 'kind', 'amount', 'closing', 'verdict', 'tx'],
      p.sales.map((s) => ({
        cls: s.verdict === 'dead-letter' ? 'bad' : '',
        cells: [timeHtml(s.at), s.kind, `${money(s.amount_milli)} ${s.currency}`, s.closing, s.verdict, s.tx_id],
      })),
    )}
    <h2>Audits</h2>
    ${listTable(
      'machine-audits',
      ['at', 'check', 'verdict', 'difference', 'why'],
      p.audits.map((a) => ({
        cls: a.verdict,
        cells: [timeHtml(a.at), check(a.check_ok), a.verdict, a.difference, a.message],
      })),
    )}
    <h2>Updates</h2>
    ${listTable(
      'machine-updates',
      ['at', 'version', 'state', 'running', 'detail'],
      p.updates.map((u) => ({ cls: u.state, cells: [timeHtml(u.at), u.version, u.state, u.running, u.detail] })),
    )}
    <h2>Status history</h2>
    ${listTable(
      'machine-history',
      ['received', 'link', 'reader', 'gateway', 'outbox pending/dead', 'version', 'alarms'],
      p.history.map((h) => ({
        cls: '',
        cells: [
          timeHtml(h.received_at),
          h.online === 1 ? 'online' : 'offline',
          h.reader,
          h.gateway,
          `${h.outbox_pending}/${h.outbox_dead}`,
          h.version,
          h.alarms,
        ],
      })),
    )}
  </section>`;
}
