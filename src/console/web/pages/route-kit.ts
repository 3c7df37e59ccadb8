/** Small pieces the route's pages share (planograms, stock, routes, pick list, visit, catalog). */
import type { Problem } from '../../route/planogram-rules.js';
import { priceText } from '../../route/planogram-file.js';
import { DAY_MS } from '../../route/stock-math.js';
import { html, timeHtml, type Html } from '../html.js';

export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

const enc = encodeURIComponent;

export const machineLink = (id: string) => html`<a href="/machines/${enc(id)}">${id}</a>`;
export const stockLink = (id: string, label: string = id) => html`<a href="/stock/${enc(id)}">${label}</a>`;
export const visitLink = (id: string, label = 'visit') => html`<a class="button" href="/visit/${enc(id)}">${label}</a>`;
export const templateLink = (id: string) => html`<a href="/planograms/templates/${enc(id)}">${id}</a>`;
export const routeLink = (id: string, day: string) => html`<a href="/routes/${enc(id)}?day=${day}">${id}</a>`;

/**
 * A time as every console page shows it: in the reader's zone, to the second, the exact instant on
 * hover (html.ts timeHtml; page() writes it in the account's zone). `seconds` is kept for callers.
 */
export function timeText(iso: string | null, _seconds = false): Html | string {
  return iso === null || iso === '' ? '' : timeHtml(iso);
}

/** A day parameter (YYYY-MM-DD, UTC) as the day's first millisecond; today when absent or not a day. */
export function dayParam(value: string | null, nowMs: number): { day: string; dayMs: number } {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value ?? '');
  const ms = m === null ? NaN : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  const dayMs =
    Number.isFinite(ms) && new Date(ms).toISOString().startsWith(value ?? '') ? ms : nowMs - (nowMs % DAY_MS);
  return { day: new Date(dayMs).toISOString().slice(0, 10), dayMs };
}

export function dayText(dayMs: number): string {
  return `${WEEKDAYS[new Date(dayMs).getUTCDay()]} ${new Date(dayMs).toISOString().slice(0, 10)}`;
}

export function price(milli: number | null): string {
  return milli === null ? '' : priceText(milli);
}

/** Days to empty, to one decimal; a dash when the selection does not sell. */
export function daysText(days: number | null): string {
  if (days === null) return '-';
  return days >= 100 ? '100+' : days.toFixed(1);
}

/** The flag a selection or machine carries when the VMC asks another price than the planogram's. */
export const PRICE_FLAG = html`<span class="flag" title="the VMC asks another price than the planogram's"
  >price differs</span
>`;

export function notice(message: string | null, problems: Problem[] = []): Html {
  const cls = problems.length > 0 ? 'error' : 'notice';
  return html`${message === null ? html`` : html`<p class="${cls}" id="notice">${message}</p>`}
  ${
    problems.length === 0
      ? html``
      : html`<ul class="problems" id="problems">
          ${problems.map((p) => html`<li><strong>${p.where}</strong>: ${p.message}</li>`)}
        </ul>`
  }`;
}

export function csrfField(csrf: string): Html {
  return html`<input type="hidden" name="csrf" value="${csrf}" />`;
}

export const canPlan = (role: string) => role === 'planner' || role === 'admin';
