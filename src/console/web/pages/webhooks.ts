/** The Webhooks and API tokens pages (admins only): endpoints, one endpoint's delivery log, tokens. */
import type { Endpoint } from '../../store/webhook-queries.js';
import { html, listTable, timeHtml, type Html } from '../html.js';

const when = (ms: number | string | null) => (ms === null ? '' : timeHtml(new Date(Number(ms)).toISOString()));

function note(message: string | null, error: boolean): Html {
  return message === null ? html`` : html`<p class="${error ? 'error' : 'notice'}" id="page-message">${message}</p>`;
}

/** A secret or token shown this once: it is not kept where the page could show it again. */
export function shownOnce(label: string, value: string): Html {
  return html`<p class="notice">${label} (shown this once; copy it now):</p>
    <pre id="shown-once">${value}</pre>`;
}

export function webhooksBody(endpoints: Endpoint[], head: number, csrf: string, message: Html | null): Html {
  return html`${message ?? html``}
    ${listTable(
      'endpoints',
      ['endpoint', 'URL', 'receives', 'state', 'feed delivered / stored'],
      endpoints.map((e) => ({
        cls: e.enabled === 1 ? '' : 'down',
        cells: [
          html`<a href="/webhooks/${e.id}">${e.id}</a>`,
          e.url,
          [e.events === 1 ? 'events' : '', e.alerts === 1 ? 'alerts' : ''].filter((x) => x !== '').join(', '),
          e.enabled === 1 ? 'enabled' : `disabled: ${e.disabled_reason ?? ''}`,
          e.events === 1 ? `${e.feed_cursor} / ${head}` : '',
        ],
      })),
    )}
    <h2>Add an endpoint</h2>
    <p>
      The URL is checked now: https (or http on loopback), an address outside private networks, and a signed test
      message (type <code>webhook.test</code>) it must answer with 2xx within 5 s, without a redirect.
    </p>
    <form method="post" action="/webhooks" class="stack" id="endpoint-form">
      <input type="hidden" name="csrf" value="${csrf}" />
      <label>URL <input type="url" name="url" required maxlength="2048" /></label>
      <label class="check"><input type="checkbox" name="events" checked /> the event feed</label>
      <label class="check"><input type="checkbox" name="alerts" checked /> alert notifications</label>
      <label
        >Feed starts
        <select name="from">
          <option value="now">after the events stored so far</option>
          <option value="beginning">from the first event the console has</option>
        </select></label
      >
      <button type="submit" id="endpoint-add">Add endpoint</button>
    </form>`;
}

export interface EndpointView {
  endpoint: Endpoint;
  head: number;
  csrf: string;
  log: {
    deliveries: {
      id: string;
      kind: string;
      state: string;
      attempts: number;
      created_ms: number;
      next_ms: number;
      last_error: string | null;
      feed_from: number | null;
      feed_to: number | null;
    }[];
    attempts: {
      delivery_id: string;
      at_ms: number;
      instance: string;
      status: number | null;
      error: string | null;
      duration_ms: number;
    }[];
  };
  message: Html | null;
}

export function endpointBody(v: EndpointView): Html {
  const e = v.endpoint;
  const action = (path: string, label: string) =>
    html`<form method="post" action="/webhooks/${e.id}/${path}" class="inline">
      <input type="hidden" name="csrf" value="${v.csrf}" /><button type="submit" id="endpoint-${path}">${label}</button>
    </form>`;
  return html`${v.message ?? html``}
    <p>
      ${e.url} · owner ${e.owner} · ${e.enabled === 1 ? 'enabled' : `disabled: ${e.disabled_reason ?? ''}`}
      ${e.events === 1 ? html` · feed delivered to position ${e.feed_cursor} of ${v.head}` : html``}
    </p>
    <p>
      ${e.enabled === 1 ? action('disable', 'Disable') : action('enable', 'Enable')} ${action('rotate', 'New secret')}
      ${action('delete', 'Delete')}
    </p>
    <h2>Deliveries</h2>
    ${listTable(
      'deliveries',
      ['webhook-id', 'kind', 'state', 'attempts', 'queued', 'next attempt', 'last error'],
      v.log.deliveries.map((d) => ({
        cls: d.state,
        cells: [
          d.id,
          d.kind === 'events' ? `events ${Number(d.feed_from) + 1}-${d.feed_to}` : d.kind,
          d.state,
          d.attempts,
          when(d.created_ms),
          d.state === 'pending' ? when(d.next_ms) : '',
          d.last_error ?? '',
        ],
      })),
    )}
    <h2>Attempts</h2>
    ${listTable(
      'attempts',
      ['at', 'webhook-id', 'instance', 'status', 'ms', 'error'],
      v.log.attempts.map((a) => ({
        cls: a.error === null ? '' : 'down',
        cells: [when(a.at_ms), a.delivery_id, a.instance, a.status ?? '', a.duration_ms, a.error ?? ''],
      })),
    )}`;
}

export function tokensBody(
  tokens: {
    id: number;
    name: string;
    prefix: string;
    created_by: string;
    created_at: string;
    last_used_at: string | null;
    revoked_at: string | null;
  }[],
  csrf: string,
  message: Html | null,
): Html {
  return html`${message ?? html``}
    <p>
      Read-only tokens for <code>/api/v1</code> (its document: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>);
      send one as <code>Authorization: Bearer qrv_...</code>.
    </p>
    ${listTable(
      'tokens',
      ['token', 'name', 'made by', 'made', 'last used', ''],
      tokens.map((t) => ({
        cls: t.revoked_at === null ? '' : 'down',
        cells: [
          `${t.prefix}...`,
          t.name,
          t.created_by,
          timeHtml(t.created_at),
          timeHtml(t.last_used_at),
          t.revoked_at !== null
            ? `revoked ${t.revoked_at}`
            : html`<form method="post" action="/api-tokens/${t.id}/revoke" class="inline">
                <input type="hidden" name="csrf" value="${csrf}" /><button type="submit">Revoke</button>
              </form>`,
        ],
      })),
    )}
    <h2>Make a token</h2>
    <form method="post" action="/api-tokens" class="inline" id="token-form">
      <input type="hidden" name="csrf" value="${csrf}" />
      <input type="text" name="name" required maxlength="100" placeholder="what it is for" />
      <button type="submit" id="token-add">Make token</button>
    </form>`;
}

export { note };
