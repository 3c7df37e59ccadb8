/** The Alerts page: one account's rules, their form, where its e-mail goes, and its last notifications. */
import { ALARM_CODES } from '../../../fleet/contract/index.js';
import { CONDITIONS, CONDITION_KINDS } from '../../alerts/conditions.js';
import type { Rule } from '../../store/alert-queries.js';
import { html, listTable, timeHtml, type Html } from '../html.js';

const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const clock = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

export interface AlertsView {
  owner: string;
  csrf: string;
  /** Admins choose whose rules they see. */
  owners: string[] | null;
  email: string | null;
  emailConfigured: boolean;
  rules: Rule[];
  endpoints: { id: number; url: string }[];
  notifications: {
    id: string;
    channel: string;
    kind: string;
    machine_id: string | null;
    state: string;
    attempts: number;
    created_ms: number;
    payload: string;
    last_error: string | null;
  }[];
  editing: Rule | null;
  defaultZone: string;
  message: string | null;
  error: boolean;
}

function ruleCells(r: Rule, v: AlertsView): unknown[] {
  const days = r.days
    .split(',')
    .map((d) => DAYS[Number(d) - 1] ?? d)
    .join(' ');
  const channels = [r.email === 1 ? 'e-mail' : null, r.endpoint_id !== null ? `webhook ${r.endpoint_id}` : null]
    .filter((c) => c !== null)
    .join(', ');
  const what =
    r.condition === 'alarm'
      ? `alarm ${r.alarm_code || '(any)'}`
      : `${r.condition}${r.threshold_minutes > 0 ? ` ${r.threshold_minutes} min` : ''}`;
  const scope =
    [r.machines, r.route_id === '' ? '' : `route ${r.route_id}`].filter((s) => s !== '').join('; ') || 'every machine';
  return [
    html`<a href="/alerts/${r.id}?owner=${encodeURIComponent(v.owner)}">${r.name}</a>`,
    what,
    scope,
    `${days} ${clock(r.from_minute)}-${clock(r.to_minute)} ${r.time_zone}`,
    `${r.hold_minutes} min`,
    r.repeat_minutes === 0 ? 'once' : `every ${r.repeat_minutes} min`,
    r.notify_cleared === 1 ? 'yes' : 'no',
    channels || 'none',
    r.enabled === 1 ? 'on' : 'off',
    html`<form method="post" action="/alerts/${r.id}/delete" class="inline">
      <input type="hidden" name="csrf" value="${v.csrf}" /><input type="hidden" name="owner" value="${v.owner}" />
      <button type="submit">Delete</button>
    </form>`,
  ];
}

const checkbox = (name: string, on: boolean, label: string) =>
  html`<label class="check"><input type="checkbox" name="${name}" ${on ? html`checked` : html``} /> ${label}</label>`;

function option(value: string, label: string, selected: boolean): Html {
  return selected
    ? html`<option value="${value}" selected>${label}</option>`
    : html`<option value="${value}">${label}</option>`;
}

const endpointOption = (e: { id: number; url: string }, r: Rule | null) =>
  option(String(e.id), `${e.id}: ${e.url}`, r?.endpoint_id === e.id);

const ownerLink = (o: string, current: string) =>
  o === current
    ? html`<a href="/alerts?owner=${encodeURIComponent(o)}" class="current">${o}</a> `
    : html`<a href="/alerts?owner=${encodeURIComponent(o)}">${o}</a> `;

function ruleForm(v: AlertsView): Html {
  const r = v.editing;
  const days = (r?.days ?? '1,2,3,4,5').split(',');
  const action = r === null ? '/alerts' : `/alerts/${r.id}`;
  return html`<form method="post" action="${action}" class="stack" id="rule-form">
    <input type="hidden" name="csrf" value="${v.csrf}" /><input type="hidden" name="owner" value="${v.owner}" />
    <label>Name <input type="text" name="name" required maxlength="100" value="${r?.name ?? ''}" /></label>
    <label
      >Condition
      <select name="condition">
        ${CONDITION_KINDS.map((k) => option(k, `${k}: ${CONDITIONS[k].label}`, (r?.condition ?? 'alarm') === k))}
      </select></label
    >
    <label
      >Alarm code (for alarm)
      <select name="alarm_code">
        ${option('', 'any', (r?.alarm_code ?? '') === '')}${ALARM_CODES.map((c) => option(c, c, r?.alarm_code === c))}
      </select></label
    >
    <label
      >Threshold, minutes (offline longer than; no sale for)
      <input type="number" name="threshold_minutes" min="0" value="${r?.threshold_minutes ?? 0}"
    /></label>
    <label
      >Machines (ids, commas; empty: every machine) <input type="text" name="machines" value="${r?.machines ?? ''}"
    /></label>
    <label
      >Route (its machines) <input type="text" name="route_id" maxlength="64" value="${r?.route_id ?? ''}"
    /></label>
    <fieldset>
      <legend>Days</legend>
      ${DAYS.map((d, i) => checkbox(`day${i + 1}`, days.includes(String(i + 1)), d))}
    </fieldset>
    <label
      >From <input type="text" name="from" pattern="\\d{1,2}:\\d{2}" value="${clock(r?.from_minute ?? 0)}"
    /></label>
    <label>To <input type="text" name="to" pattern="\\d{1,2}:\\d{2}" value="${clock(r?.to_minute ?? 1440)}" /></label>
    <label
      >Time zone <input type="text" name="time_zone" maxlength="64" value="${r?.time_zone ?? v.defaultZone}"
    /></label>
    <label
      >Hold, minutes (how long it must hold)
      <input type="number" name="hold_minutes" min="0" value="${r?.hold_minutes ?? 5}"
    /></label>
    <label
      >Repeat every, minutes (0: once)
      <input type="number" name="repeat_minutes" min="0" value="${r?.repeat_minutes ?? 0}"
    /></label>
    ${checkbox('notify_cleared', (r?.notify_cleared ?? 1) === 1, 'say when it cleared')}
    ${checkbox('email', (r?.email ?? 1) === 1, 'by e-mail')}
    <label
      >Webhook
      <select name="endpoint">
        ${option('', 'none', r?.endpoint_id == null)}${v.endpoints.map((e) => endpointOption(e, r))}
      </select></label
    >
    ${checkbox('enabled', (r?.enabled ?? 1) === 1, 'enabled')}
    <button type="submit" id="rule-save">${r === null ? 'Add rule' : 'Save rule'}</button>
  </form>`;
}

export function alertsBody(v: AlertsView): Html {
  const who =
    v.owners === null ? html`` : html`<p class="pager">Rules of ${v.owners.map((o) => ownerLink(o, v.owner))}</p>`;
  const mailNote = v.emailConfigured
    ? html``
    : html`<p class="notice">
        E-mail is not configured on this console (email in its configuration): e-mail waits in the queue.
      </p>`;
  const message =
    v.message === null ? html`` : html`<p class="${v.error ? 'error' : 'notice'}" id="alerts-message">${v.message}</p>`;
  return html`${message} ${who}
    <h2>E-mail of ${v.owner}</h2>
    ${mailNote}
    <form method="post" action="/alerts/email" class="inline" id="email-form">
      <input type="hidden" name="csrf" value="${v.csrf}" /><input type="hidden" name="owner" value="${v.owner}" />
      <input type="email" name="email" maxlength="254" value="${v.email ?? ''}" placeholder="name@example.com" />
      <button type="submit">Save address</button>
    </form>
    <h2>Rules</h2>
    ${listTable(
      'rules',
      ['rule', 'condition', 'machines', 'hours', 'hold', 'repeat', 'cleared', 'to', 'on', ''],
      v.rules.map((r) => ({ cls: '', cells: ruleCells(r, v) })),
    )}
    <h2>${v.editing === null ? 'Add a rule' : `Change rule ${v.editing.name}`}</h2>
    ${ruleForm(v)}
    <h2>Last notifications</h2>
    ${listTable(
      'notifications',
      ['queued', 'machine', 'by', 'what', 'state', 'attempts'],
      v.notifications.map((n) => {
        let subject = '';
        try {
          const p = JSON.parse(n.payload) as { subject?: string; type?: string };
          subject = p.subject ?? p.type ?? '';
        } catch {
          subject = '';
        }
        return {
          cls: n.state,
          cells: [
            timeHtml(new Date(Number(n.created_ms)).toISOString()),
            n.machine_id ?? '',
            n.channel,
            subject,
            n.last_error === null ? n.state : `${n.state}: ${n.last_error}`,
            n.attempts,
          ],
        };
      }),
    )}`;
}
