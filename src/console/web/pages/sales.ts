/** The sales page and its CSV export (the same rows as shown, every page of them). */
import { salesChart } from '../chart.js';
import { csv } from '../csv.js';
import { html, money, pageParam, pager, timeHtml, type Html } from '../html.js';
import { dayParam, refused } from '../params.js';
import type { DayTotal, MachineDayRow, SalesQuery } from '../../store/report-queries.js';
import type { SalesTable } from '../../store/schema.js';

const DEFAULT_DAYS = 14;

/** The period asked (`from`, `to`: the last 14 days by default); a day that is no day is refused (./params.ts). */
export function salesQuery(params: URLSearchParams, pageSize: number, today = new Date()): SalesQuery {
  const toDay = dayParam(params, 'to') ?? today.toISOString().slice(0, 10);
  const fromDay =
    dayParam(params, 'from') ??
    new Date(Date.parse(toDay) - (DEFAULT_DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
  if (fromDay > toDay) throw refused('from', `${fromDay} is after to (${toDay})`);
  return {
    from: fromDay,
    to: toDay,
    machine: (params.get('machine') ?? '').slice(0, 128),
    page: pageParam(params.get('page')),
    pageSize,
  };
}

export interface SalesView {
  q: SalesQuery;
  days: DayTotal[];
  byMachine: { rows: MachineDayRow[]; total: number };
  dead: SalesTable[];
  unresolved: {
    machine_id: string;
    outbox_pending: number;
    outbox_dead: number;
    online: number;
    status_at: string | null;
  }[];
}

function queryString(q: SalesQuery): URLSearchParams {
  return new URLSearchParams({ from: q.from, to: q.to, machine: q.machine });
}

function dayTable(days: DayTotal[]): Html {
  return html`<table class="list" id="sales-days">
    <thead>
      <tr>
        <th>day</th>
        <th>currency</th>
        <th>paid</th>
        <th>count</th>
        <th>cash</th>
        <th>cash count</th>
        <th>cancelled</th>
        <th>dead-lettered</th>
      </tr>
    </thead>
    <tbody>
      ${days.map(
        (d) =>
          html`<tr>
            <td>${d.day}</td>
            <td>${d.currency}</td>
            <td class="num">${money(d.paidMilli)}</td>
            <td class="num">${d.paidCount}</td>
            <td class="num">${money(d.cashMilli)}</td>
            <td class="num">${d.cashCount}</td>
            <td class="num">${d.cancelledCount}</td>
            <td class="num${d.deadCount > 0 ? ' bad' : ''}">${d.deadCount}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function callouts(v: SalesView): Html {
  return html`<h2>Needs a person</h2>
    <p>
      ${
        v.dead.length === 0
          ? 'No dead-lettered payment in this period.'
          : html`<strong class="bad">${v.dead.length} dead-lettered payments</strong>`
      }
    </p>
    ${
      v.dead.length === 0
        ? html``
        : html`<table class="list" id="sales-dead">
            <thead>
              <tr>
                <th>machine</th>
                <th>at</th>
                <th>amount</th>
                <th>closing</th>
                <th>tx</th>
              </tr>
            </thead>
            <tbody>
              ${v.dead.map(
                (s) =>
                  html`<tr class="bad">
                    <td>${s.machine_id}</td>
                    <td>${timeHtml(s.at)}</td>
                    <td class="num">${money(s.amount_milli)} ${s.currency}</td>
                    <td>${s.closing ?? ''}</td>
                    <td>${s.tx_id ?? ''}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    <p>
      ${
        v.unresolved.length === 0
          ? 'No machine holds unresolved payments.'
          : html`${v.unresolved.length} machines hold payments not yet closed with the gateway:`
      }
    </p>
    ${
      v.unresolved.length === 0
        ? html``
        : html`<table class="list" id="sales-unresolved">
            <thead>
              <tr>
                <th>machine</th>
                <th>pending</th>
                <th>dead</th>
                <th>link</th>
              </tr>
            </thead>
            <tbody>
              ${v.unresolved.map(
                (u) =>
                  html`<tr>
                    <td><a href="/machines/${encodeURIComponent(u.machine_id)}">${u.machine_id}</a></td>
                    <td class="num">${u.outbox_pending}</td>
                    <td class="num${u.outbox_dead > 0 ? ' bad' : ''}">${u.outbox_dead}</td>
                    <td>${u.online === 1 ? 'online' : 'offline'}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }`;
}

export function salesBody(v: SalesView): Html {
  const { q } = v;
  const currencies = [...new Set(v.days.map((d) => d.currency))];
  const charts = currencies.map(
    (c) =>
      html`<h2>Paid per day (${c})</h2>
        ${salesChart(
          v.days.filter((d) => d.currency === c).map((d) => ({ label: d.day, milli: d.paidMilli, count: d.paidCount })),
          c,
        )}`,
  );
  return html`<form method="get" action="/sales" class="filters">
      <label>From <input type="date" name="from" value="${q.from}" /></label
      ><label>To <input type="date" name="to" value="${q.to}" /></label>
      <label>Machine <input type="text" name="machine" value="${q.machine}" maxlength="128" /></label
      ><button type="submit">Apply</button>
      <a class="button" id="csv-link" href="/sales.csv?${queryString(q).toString()}">Export CSV</a>
    </form>
    <section id="live">
      ${charts}${dayTable(v.days)}${callouts(v)}
      <h2>By machine and day</h2>
      <table class="list" id="sales-machines">
        <thead>
          <tr>
            <th>day</th>
            <th>machine</th>
            <th>currency</th>
            <th>paid</th>
            <th>count</th>
            <th>cash</th>
            <th>cash count</th>
            <th>cancelled</th>
            <th>dead-lettered</th>
          </tr>
        </thead>
        <tbody>
          ${v.byMachine.rows.map(
            (r) =>
              html`<tr>
                <td>${r.day}</td>
                <td><a href="/machines/${encodeURIComponent(r.machineId)}">${r.machineId}</a></td>
                <td>${r.currency}</td>
                <td class="num">${money(r.paidMilli)}</td>
                <td class="num">${r.paidCount}</td>
                <td class="num">${money(r.cashMilli)}</td>
                <td class="num">${r.cashCount}</td>
                <td class="num">${r.cancelledCount}</td>
                <td class="num">${r.deadCount}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${pager('/sales', queryString(q), q.page, q.pageSize, v.byMachine.total)}
    </section>`;
}

export const SALES_CSV_HEADER = [
  'day',
  'machine',
  'currency',
  'paid',
  'paid_count',
  'cash',
  'cash_count',
  'cancelled_count',
  'dead_letter_count',
];

export function salesCsv(rows: MachineDayRow[]): string {
  return csv(
    SALES_CSV_HEADER,
    rows.map((r) => [
      r.day,
      r.machineId,
      r.currency,
      money(r.paidMilli),
      r.paidCount,
      money(r.cashMilli),
      r.cashCount,
      r.cancelledCount,
      r.deadCount,
    ]),
  );
}
