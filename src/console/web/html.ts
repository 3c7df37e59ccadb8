/**
 * HTML for the console's pages. Every value goes through `esc` (text and attribute values), so a
 * machine-sent `<script>` shows as text, and control and bidi characters (NUL, ESC, C1 such as
 * U+009B, U+202E which shows a txId reversed) show as visible escapes (`\x1b`, `\u202e`), as the
 * CLI shows them (src/core/terminal-text.ts); pages carry no inline script or style (the CSP
 * refuses both): behaviour lives in /assets/console.js, looks in /assets/console.css.
 */
import { escapeForTerminal } from '../../core/terminal-text.js';
import { isInstant, localizeTimes } from './time-format.js';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an HTML text node or a quoted attribute value; control and bidi characters made visible. */
export function esc(value: unknown): string {
  if (value === null || value === undefined) return '';
  return escapeForTerminal(String(value)).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

/** A piece of HTML built here (already escaped); anything else is escaped when interpolated. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** Tagged template: interpolated values are escaped unless they are Html (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

function render(v: unknown): string {
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(render).join('');
  return esc(v);
}

/**
 * An instant as stored (ISO text), marked so that `page()` writes it in the reader's time zone
 * with the exact instant on hover (./time-format.ts); anything else is plain (escaped) text.
 */
export function timeHtml(value: string | null | undefined): Html | string {
  if (value === null || value === undefined) return '';
  return isInstant(value) ? html`<time datetime="${value}">${value}</time>` : value;
}

/**
 * Integer thousandths as decimal text, exactly at any size: 1500 -> "1.50", 5 -> "0.005". A
 * Number is taken only as an integer (as a driver reads one amount, far below 2^53).
 */
export function money(milli: bigint | number | string): string {
  const value = typeof milli === 'bigint' ? milli : BigInt(typeof milli === 'number' ? Math.round(milli) : milli);
  const sign = value < 0n ? '-' : '';
  const abs = value < 0n ? -value : value;
  const frac = String(abs % 1000n).padStart(3, '0');
  return `${sign}${abs / 1000n}.${frac.endsWith('0') ? frac.slice(0, 2) : frac}`;
}

export interface PageFrame {
  title: string;
  /** The reader; times are shown in their zone (UTC before a login). */
  user: { name: string; role: string; csrf: string; timeZone: string } | null;
  /** Current section, for the navigation. */
  section: string;
  /** Refresh the #live part when the server says something changed. */
  live: boolean;
  body: Html;
}

const SECTIONS: [string, string][] = [
  ['/', 'Fleet'],
  ['/sales', 'Sales'],
  ['/alarms', 'Alarms'],
  ['/audits', 'Audits'],
  ['/rollouts', 'Rollouts'],
  ['/stock', 'Stock'],
  ['/routes', 'Routes'],
  ['/planograms', 'Planograms'],
  ['/catalog', 'Catalog'],
  ['/alerts', 'Alerts'],
];

const ADMIN_SECTIONS: [string, string][] = [
  ['/accounts', 'Accounts'],
  ['/webhooks', 'Webhooks'],
  ['/api-tokens', 'API tokens'],
];

function navLink(href: string, label: string, section: string): Html {
  return section === href ? html`<a href="${href}" class="current">${label}</a>` : html`<a href="${href}">${label}</a>`;
}

export function page(frame: PageFrame): string {
  const zone = frame.user?.timeZone ?? 'UTC';
  const body = new Html(localizeTimes(frame.body.text, zone));
  const nav =
    frame.user === null
      ? html``
      : html`<nav>
          ${SECTIONS.map(([href, label]) => navLink(href, label, frame.section))}
          ${frame.user.role === 'admin' ? ADMIN_SECTIONS.map(([href, text]) => navLink(href, text, frame.section)) : ''}
          <span class="who" title="times are shown in ${zone}">${frame.user.name} (${frame.user.role})</span>
          <form method="post" action="/logout" class="inline">
            <input type="hidden" name="csrf" value="${frame.user.csrf}" /><button type="submit">Log out</button>
          </form>
        </nav>`;
  return `<!doctype html>
${
  html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} - qrvend console</title>
<link rel="stylesheet" href="/assets/console.css"><script src="/assets/console.js" defer></script></head>
<body${frame.live ? html` data-live="1"` : html``}><header><strong class="brand">qrvend console</strong>${nav}</header>
<main id="main"><h1>${frame.title}</h1>${body}</main></body></html>`.text
}`;
}

/** Page links keeping the other query parameters. */
export function pager(path: string, params: URLSearchParams, page: number, pageSize: number, total: number): Html {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const link = (p: number, label: string) => {
    const next = new URLSearchParams(params);
    next.set('page', String(p));
    return html`<a href="${path}?${next.toString()}" data-page="${p}">${label}</a>`;
  };
  return html`<p class="pager">
    ${page > 1 ? link(page - 1, '< previous') : html``}
    <span>page ${page} of ${pages} (${total} rows)</span> ${page < pages ? link(page + 1, 'next >') : html``}
  </p>`;
}

/** A positive page number from a query parameter, 1 when absent or silly. */
export function pageParam(value: string | null): number {
  const n = Number(value ?? '1');
  return Number.isSafeInteger(n) && n >= 1 && n <= 1_000_000 ? n : 1;
}

/** A list table: a header row, then one row per item (its class, its cells, each escaped unless Html). */
export function listTable(id: string, headers: string[], rows: { cls: string; cells: unknown[] }[]): Html {
  return html`<table class="list" id="${id}">
    <thead>
      <tr>
        ${headers.map((h) => html`<th>${h}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (r) =>
          html`<tr class="${r.cls}">
            ${r.cells.map((c) => html`<td>${c}</td>`)}
          </tr>`,
      )}
    </tbody>
  </table>`;
}
