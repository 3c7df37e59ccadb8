/** The alarms, audits and rollouts pages. */
import { ALARM_CODES, UPDATE_STATES } from '../../../fleet/contract/index.js';
import { adviceHtml } from '../alarm-advice.js';
import { html, pageParam, pager, timeHtml, type Html } from '../html.js';
import type { alarmList, auditList, rollouts } from '../../store/report-queries.js';

const machineLink = (id: string) => html`<a href="/machines/${encodeURIComponent(id)}">${id}</a>`;

export function alarmQuery(params: URLSearchParams, pageSize: number) {
  const s = params.get('state') ?? 'open';
  const state = s === 'cleared' || s === 'all' ? s : ('open' as const);
  const c = params.get('code') ?? '';
  const code = (ALARM_CODES as readonly string[]).includes(c) ? c : '';
  return { state, code, page: pageParam(params.get('page')), pageSize } as const;
}

export function alarmsBody(r: Awaited<ReturnType<typeof alarmList>>, q: ReturnType<typeof alarmQuery>): Html {
  const states = ['open', 'cleared', 'all'].map(
    (s) => html`<option${s === q.state ? html` selected` : html``}>${s}</option>`,
  );
  const codes = ['', ...ALARM_CODES].map(
    (c) =>
      html`<option value="${c}" ${c === q.code ? html` selected` : html``}>${c === '' ? 'every code' : c}</option>`,
  );
  return html`<form method="get" action="/alarms" class="filters">
      <label
        >State
        <select name="state">
          ${states}
        </select></label
      >
      <label
        >Code
        <select name="code">
          ${codes}
        </select></label
      ><button type="submit">Apply</button>
    </form>
    <section id="live">
      <h2>Open, by code</h2>
      <table class="list" id="alarms-by-code">
        <thead>
          <tr>
            <th>code</th>
            <th>machines</th>
            <th>advice</th>
          </tr>
        </thead>
        <tbody>
          ${r.openByCode.map(
            (o) =>
              html`<tr>
                <td>${o.code}</td>
                <td class="num">${o.n}</td>
                <td>${adviceHtml(o.code)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      <h2>Alarms</h2>
      <table class="list" id="alarms">
        <thead>
          <tr>
            <th>machine</th>
            <th>code</th>
            <th>raised</th>
            <th>detail</th>
            <th>cleared</th>
            <th>advice</th>
          </tr>
        </thead>
        <tbody>
          ${r.rows.map(
            (a) =>
              html`<tr class="${a.cleared_at === null ? 'open' : 'cleared'}" data-code="${a.code}">
                <td>${machineLink(a.machine_id)}</td>
                <td>${a.code}</td>
                <td>${timeHtml(a.raised_at)}</td>
                <td>${a.raised_detail ?? ''}</td>
                <td class="state">${a.cleared_at === null ? 'open' : timeHtml(a.cleared_at)}</td>
                <td>${adviceHtml(a.code)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${pager('/alarms', new URLSearchParams({ state: q.state, code: q.code }), q.page, q.pageSize, r.total)}
    </section>`;
}

export function auditQuery(params: URLSearchParams, pageSize: number) {
  const v = params.get('verdict') ?? '';
  const verdict = ['match', 'mismatch', 'skipped', 'unknown'].includes(v) ? v : '';
  return { verdict, page: pageParam(params.get('page')), pageSize };
}

export function auditsBody(r: Awaited<ReturnType<typeof auditList>>, q: ReturnType<typeof auditQuery>): Html {
  const verdicts = ['', 'match', 'mismatch', 'skipped', 'unknown'].map(
    (v) =>
      html`<option value="${v}" ${v === q.verdict ? html` selected` : html``}>
        ${v === '' ? 'every verdict' : v}
      </option>`,
  );
  return html`<p>
      Each DEX audit a machine read, its file check, and the machine's reconciliation of the VMC's cashless count
      against its own ledger of our sales (docs/dex.md): the difference is the VMC's count minus ours.
    </p>
    <form method="get" action="/audits" class="filters">
      <label
        >Verdict
        <select name="verdict">
          ${verdicts}
        </select></label
      ><button type="submit">Apply</button>
    </form>
    <section id="live">
      <table class="list" id="audits">
        <thead>
          <tr>
            <th>machine</th>
            <th>read at</th>
            <th>check</th>
            <th>verdict</th>
            <th>difference</th>
            <th>why</th>
          </tr>
        </thead>
        <tbody>
          ${r.rows.map(
            (a) =>
              html`<tr>
                <td>${machineLink(a.machine_id)}</td>
                <td>${timeHtml(a.at)}</td>
                <td>${a.check_ok === null ? '' : a.check_ok === 1 ? 'ok' : 'failed'}</td>
                <td class="${a.verdict === 'mismatch' ? 'bad' : ''}">${a.verdict}</td>
                <td class="num">${a.difference ?? ''}</td>
                <td>${a.message ?? ''}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${pager('/audits', new URLSearchParams({ verdict: q.verdict }), q.page, q.pageSize, r.total)}
    </section>`;
}

export function rolloutsBody(r: Awaited<ReturnType<typeof rollouts>>): Html {
  const byState = new Map<string, number>();
  for (const m of r.machines) byState.set(m.state, (byState.get(m.state) ?? 0) + 1);
  return html`<section id="live">
    <h2>Versions on offer</h2>
    <table class="list" id="versions">
      <thead>
        <tr>
          <th>version</th>
          <th>machines</th>
          <th>last event</th>
        </tr>
      </thead>
      <tbody>
        ${r.versions.map(
          (v) => html`<tr${v.version === r.chosen ? html` class="current"` : html``}>
<td><a href="/rollouts?version=${encodeURIComponent(v.version)}">${v.version}</a></td>
<td class="num">${v.machines}</td><td>${timeHtml(v.last)}</td></tr>`,
        )}
      </tbody>
    </table>
    ${
      r.chosen === ''
        ? html`<p class="empty">No update events yet.</p>`
        : html`<h2>${r.chosen}: each machine's state</h2>
            <p>
              ${UPDATE_STATES.filter((s) => byState.has(s)).map(
                (s) => html`<span class="chip">${s}: ${byState.get(s)}</span> `,
              )}
            </p>
            <table class="list" id="rollout-machines">
              <thead>
                <tr>
                  <th>machine</th>
                  <th>state</th>
                  <th>at</th>
                  <th>running</th>
                  <th>rollout</th>
                  <th>detail</th>
                </tr>
              </thead>
              <tbody>
                ${r.machines.map(
                  (m) =>
                    html`<tr>
                      <td>${machineLink(m.machine_id)}</td>
                      <td>${m.state}</td>
                      <td>${timeHtml(m.at)}</td>
                      <td>${m.running}</td>
                      <td>${m.rollout_id ?? ''}</td>
                      <td>${m.detail ?? ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
    }
  </section>`;
}
