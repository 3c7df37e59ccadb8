/** The routes page (routes, the fleet's "needs a visit" for a day) and one route's day. */
import type { RouteDay, RouteSummary, VisitNeed } from '../../store/route-store.js';
import { DAY_MS } from '../../route/stock-math.js';
import { html, pager, type Html } from '../html.js';
import {
  WEEKDAYS,
  canPlan,
  csrfField,
  dayText,
  daysText,
  notice,
  routeLink,
  stockLink,
  timeText,
  visitLink,
} from './route-kit.js';

export interface RoutesView {
  routes: RouteSummary[];
  day: string;
  dayMs: number;
  needs: { rows: VisitNeed[]; total: number };
  page: number;
  pageSize: number;
  user: { role: string; csrf: string };
  message: string | null;
}

const days = (weekdays: number[]) =>
  weekdays.length === 0 ? 'every day' : weekdays.map((d) => WEEKDAYS[d]!.slice(0, 3)).join(', ');

const soonest = (n: VisitNeed) => daysText(n.soonestEmptyMs === null ? null : n.soonestEmptyMs / DAY_MS);

function whyText(n: VisitNeed): string {
  const below = n.below === 0 ? [] : [`${n.below} below threshold`];
  const empties = n.emptiesBeforeNext ? [`one empty in ${soonest(n)} days, before the next visit`] : [];
  return [...below, ...empties].join('; ');
}

function weekdayBoxes(chosen: number[]): Html {
  return html`<fieldset class="weekdays">
    <legend>Visit days (none: every day)</legend>
    ${WEEKDAYS.map(
      (name, d) =>
        html`<label class="check"
          ><input type="checkbox" name="wd${d}" value="1" ${chosen.includes(d) ? html`checked` : html``} />
          ${name.slice(0, 3)}</label
        >`,
    )}
  </fieldset>`;
}

export function routeForm(csrf: string, routeId: string, weekdays: number[], machines: string[]): Html {
  return html`<form method="post" action="/routes" class="stack wide" id="route-form">
    ${csrfField(csrf)}
    <label>Route <input name="route" value="${routeId}" required maxlength="64" /></label>
    ${weekdayBoxes(weekdays)}
    <label
      >Machines in visit order (one a line)
      <textarea name="machines" rows="6">${machines.join('\n')}</textarea>
    </label>
    <button type="submit" id="route-save">Save route</button>
  </form>`;
}

function needsTable(v: RoutesView): Html {
  if (v.needs.total === 0) return html`<p class="empty" id="needs-none">No machine needs a visit that day.</p>`;
  return html`<table class="list" id="needs">
      <thead>
        <tr>
          <th>machine</th>
          <th>below threshold</th>
          <th>soonest empty (days)</th>
          <th>next planned visit</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${v.needs.rows.map(
          (n) =>
            html`<tr data-machine="${n.machineId}">
              <td>${stockLink(n.machineId)}</td>
              <td class="num${n.below > 0 ? ' bad' : ''}">${n.below}</td>
              <td class="num${n.emptiesBeforeNext ? ' bad' : ''}">${soonest(n)}</td>
              <td>${dayText(n.nextVisitMs)}</td>
              <td>${visitLink(n.machineId)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${pager('/routes', new URLSearchParams({ day: v.day }), v.page, v.pageSize, v.needs.total)}`;
}

export function routesBody(v: RoutesView): Html {
  return html`${notice(v.message)}
    <form method="get" action="/routes" class="filters">
      <label>Day <input type="date" name="day" value="${v.day}" /></label><button type="submit">Show</button>
    </form>
    <section id="live">
      <h2>Routes</h2>
      ${
        v.routes.length === 0
          ? html`<p class="empty">No route yet.</p>`
          : html`<table class="list" id="routes">
              <thead>
                <tr>
                  <th>route</th>
                  <th>visit days</th>
                  <th>machines</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                ${v.routes.map(
                  (r) =>
                    html`<tr data-route="${r.routeId}">
                      <td>${routeLink(r.routeId, v.day)}</td>
                      <td>${days(r.weekdays)}</td>
                      <td class="num">${r.machines}</td>
                      <td>
                        <a href="/routes/${encodeURIComponent(r.routeId)}/pick?day=${v.day}">pick list</a>
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
      <h2>Machines that need a visit on ${dayText(v.dayMs)} (${v.needs.total})</h2>
      <p class="hint">
        A selection below its threshold, or selling and predicted empty before the machine's next planned visit (the
        next visit day of its route; the next day for a machine on no route).
      </p>
      ${needsTable(v)}
    </section>
    ${
      canPlan(v.user.role)
        ? html`<h2>Add or change a route</h2>
            ${routeForm(v.user.csrf, '', [], [])}`
        : html``
    }`;
}

function machineSection(m: RouteDay['machines'][number], index: number): Html {
  const bring = m.selections.reduce((n, s) => n + (m.needs === null ? 0 : s.bring), 0);
  return html`<tr data-machine="${m.machineId}" class="${m.needs === null ? 'skip' : 'visit'}">
    <td class="num">${index + 1}</td>
    <td>${stockLink(m.machineId)}</td>
    <td>${m.selections.length === 0 ? 'no planogram' : m.needs === null ? 'no visit needed' : whyText(m.needs)}</td>
    <td class="num">${m.needs === null ? '' : bring}</td>
    <td>${m.needs === null ? html`` : visitLink(m.machineId)}</td>
  </tr>`;
}

export function routeDayBody(r: RouteDay, user: { role: string; csrf: string }, day: string): Html {
  const id = encodeURIComponent(r.routeId);
  return html`<form method="get" action="/routes/${id}" class="filters">
      <label>Day <input type="date" name="day" value="${day}" /></label><button type="submit">Show</button>
    </form>
    <section id="live">
      <p>
        Visit days: ${days(r.weekdays)} · the visit counted at ${timeText(new Date(r.visitMs).toISOString())} · next
        planned visit ${dayText(r.nextVisitMs)} ·
        <a href="/routes/${id}/pick?day=${day}" id="pick-link">pick list</a>
      </p>
      <table class="list" id="route-machines">
        <thead>
          <tr>
            <th>#</th>
            <th>machine</th>
            <th>why</th>
            <th>items to bring</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          ${r.machines.map(machineSection)}
        </tbody>
      </table>
    </section>
    ${
      canPlan(user.role)
        ? html`<h2>Change the route</h2>
            ${routeForm(
              user.csrf,
              r.routeId,
              r.weekdays,
              r.machines.map((m) => m.machineId),
            )}
            <form method="post" action="/routes/delete" class="inline" id="route-delete">
              ${csrfField(user.csrf)}<input type="hidden" name="route" value="${r.routeId}" /><button type="submit">
                Remove the route
              </button>
            </form>`
        : html``
    }`;
}
