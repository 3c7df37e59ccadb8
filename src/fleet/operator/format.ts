/**
 * What `qrvend fleet status|watch|cmd` print: an aligned table a person reads at a glance, one
 * line per live event, a command's reply; and the JSON forms for scripts. Every string that came
 * from a device goes through escapeForTerminal (a txId or an alarm detail could carry escape
 * sequences), and the JSON forms through jsonForTerminal (valid JSON, controls escaped). Pure: no I/O.
 */
import { auditSummaryText } from './audit-line.js';
import { escapeForTerminal, jsonForTerminal } from '../../core/terminal-text.js';
import { sharedIdentifiers } from './shared-ids.js';
import type { CommandReply, FleetEvent, StatusMessage } from '../contract/index.js';
import type { BadCounts, MachineRow } from './fleet-view.js';

const ISO = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** `2026-11-23T04:01:02.123Z` -> `2026-11-23 04:01:02Z`; anything else shown escaped. */
export function shortTime(at: string): string {
  const m = ISO.exec(at);
  return m ? `${m[1]} ${m[2]}${m[3] === 'Z' ? 'Z' : m[3]}` : escapeForTerminal(at);
}

function alignTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

function statusCells(row: MachineRow): string[] {
  const s = row.status;
  const sale = row.lastSale
    ? `${shortTime(row.lastSale.at)} ${escapeForTerminal(row.lastSale.amount)} ` +
      `${escapeForTerminal(row.lastSale.currency)}${row.lastSale.verdict === 'dead-letter' ? ' DEAD' : ''}`
    : '-';
  const id = escapeForTerminal(row.machineId);
  if (s === null) return [id, '?', '-', '-', '-', sale, '-', '-', '(no status yet)'];
  if (!s.online) return [id, 'NO', '-', '-', '-', sale, '-', '-', '(offline: last will)'];
  const reader =
    s.readerDisabledRemotely && s.reader !== 'disabled'
      ? `${s.reader} (disable pending)`
      : s.readerDisabledRemotely
        ? 'disabled (remote)'
        : s.reader;
  return [
    id,
    'yes',
    escapeForTerminal(s.version),
    reader,
    s.gateway,
    sale,
    `${s.outbox.pending}/${s.outbox.dead}`,
    updateCell(s.update),
    s.alarms.length > 0 ? s.alarms.join(',') : '-',
  ];
}

const UPDATE_FAILED = new Set(['refused', 'failed', 'rolled-back']);

/** The last update a machine heard of: its state (failures in capitals) and the version on offer. */
function updateCell(update: Extract<StatusMessage, { online: true }>['update']): string {
  if (update === undefined) return '-';
  return (
    `${UPDATE_FAILED.has(update.state) ? update.state.toUpperCase() : update.state}` +
    ` ${escapeForTerminal(update.version)}`
  );
}

/** `versions: 1.4.0 x12, 1.5.0 x3`: what the online machines run, most common first. */
function versionsLine(rows: readonly MachineRow[]): string | null {
  const counts = new Map<string, number>();
  for (const row of rows)
    if (row.status?.online === true) counts.set(row.status.version, (counts.get(row.status.version) ?? 0) + 1);
  if (counts.size === 0) return null;
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return `versions: ${sorted.map(([v, n]) => `${escapeForTerminal(v)} x${n}`).join(', ')}`;
}

export interface StatusSummary {
  machines: number;
  online: number;
  offline: number;
  withAlarms: number;
  deadLetters: number;
}

export function summarize(rows: readonly MachineRow[]): StatusSummary {
  let online = 0;
  let offline = 0;
  let withAlarms = 0;
  let deadLetters = 0;
  for (const row of rows) {
    if (row.status?.online === true) {
      online += 1;
      if (row.status.alarms.length > 0) withAlarms += 1;
      deadLetters += row.status.outbox.dead;
    } else if (row.status?.online === false) {
      offline += 1;
    }
  }
  return { machines: rows.length, online, offline, withAlarms, deadLetters };
}

function badLine(bad: BadCounts): string | null {
  if (bad.total === 0) return null;
  const reasons = Object.entries(bad.byReason)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
  return `${bad.total} malformed message${bad.total === 1 ? '' : 's'} skipped (${reasons})`;
}

/** The table of `qrvend fleet status`, then a summary line (and the malformed count, if any). */
export function formatStatusTable(rows: readonly MachineRow[], bad: BadCounts): string {
  const lines: string[] = [];
  if (rows.length === 0) {
    lines.push('no machine has a retained status under this prefix');
  } else {
    lines.push(
      alignTable(
        ['MACHINE', 'ONLINE', 'VERSION', 'READER', 'GATEWAY', 'LAST SALE', 'OUTBOX p/d', 'UPDATE', 'ALARMS'],
        rows.map(statusCells),
      ),
    );
    const s = summarize(rows);
    lines.push('');
    lines.push(
      `${s.machines} machine${s.machines === 1 ? '' : 's'}: ${s.online} online, ${s.offline} offline, ` +
        `${s.withAlarms} with alarms, ${s.deadLetters} dead-lettered payment${s.deadLetters === 1 ? '' : 's'}`,
    );
    const versions = versionsLine(rows);
    if (versions !== null) lines.push(versions);
  }
  for (const shared of sharedIdentifiers(rows)) {
    // A device's own text: escaped like every other.
    lines.push(
      `warning: ${shared.kind} ${escapeForTerminal(JSON.stringify(shared.value.slice(0, 64)))} ` +
        `is claimed by ${escapeForTerminal(shared.machineIds.join(', '))} (the relay routes by ` +
        `its signed registry; check these machines)`,
    );
  }
  const b = badLine(bad);
  if (b !== null) lines.push(b);
  return `${lines.join('\n')}\n`;
}

/** `qrvend fleet status --json`: one object, machines as received (validated), plus counts. */
export function statusJson(rows: readonly MachineRow[], bad: BadCounts): Record<string, unknown> {
  return {
    machines: rows.map((r) => ({ machineId: r.machineId, status: r.status, lastSale: r.lastSale })),
    summary: summarize(rows),
    sharedIdentifiers: sharedIdentifiers(rows),
    malformed: { total: bad.total, byReason: bad.byReason },
  };
}

/** Machine ids in watch lines are padded to this width so the columns after them line up. */
const ID_WIDTH = 12;

/** One line of `qrvend fleet watch` for an event. */
export function formatEventLine(machineId: string, event: FleetEvent): string {
  const id = escapeForTerminal(machineId).padEnd(ID_WIDTH);
  if (event.kind === 'sale') {
    const items = event.products.map((p) => `${p.item}:${escapeForTerminal(p.outcome)}`).join(',') || '-';
    const verdict = event.verdict === 'dead-letter' ? 'DEAD-LETTER' : 'accepted';
    return (
      `${shortTime(event.at)}  ${id}  sale   ${escapeForTerminal(event.amount)} ` +
      `${escapeForTerminal(event.currency)}  ${event.flow} ${event.closing} ` +
      `${verdict}  tx ${escapeForTerminal(event.txId)}  items ${items}`
    );
  }
  if (event.kind === 'cash-sale') {
    return (
      `${shortTime(event.at)}  ${id}  cash   ${escapeForTerminal(event.price)} ` +
      `${escapeForTerminal(event.currency)}  item ${event.item} (paid to another device, not charged by qrvend)`
    );
  }
  if (event.kind === 'update') {
    const progress = event.progress ? `  ${event.progress.bytes}/${event.progress.size} bytes` : '';
    const state = UPDATE_FAILED.has(event.state) ? event.state.toUpperCase() : event.state;
    const rollout = event.rolloutId !== null ? `  rollout ${escapeForTerminal(event.rolloutId)}` : '';
    return (
      `${shortTime(event.at)}  ${id}  update ${state} ${escapeForTerminal(event.version)}` +
      ` (running ${escapeForTerminal(event.running)})${progress}${rollout}` +
      `${event.detail ? `  ${escapeForTerminal(event.detail)}` : ''}`
    );
  }
  if (event.kind === 'audit') {
    const said = auditSummaryText(event.summary);
    return (
      `${shortTime(event.at)}  ${id}  audit  ${escapeForTerminal(event.auditId)}` +
      ` part ${event.part + 1}/${event.parts}${said ? `  ${said}` : ''}`
    );
  }
  const state = event.state === 'raised' ? 'RAISED ' : 'cleared';
  return (
    `${shortTime(event.at)}  ${id}  alarm  ${state} ${event.code}` +
    `${event.detail ? `  ${escapeForTerminal(event.detail)}` : ''}`
  );
}

/** One line of `qrvend fleet watch` when a machine comes online or goes away (its last will). */
export function formatPresenceLine(machineId: string, status: StatusMessage): string {
  const id = escapeForTerminal(machineId).padEnd(ID_WIDTH);
  if (!status.online) return `${'-'.padEnd(20)}  ${id}  OFFLINE (last will)`;
  return (
    `${shortTime(status.at)}  ${id}  online  version ` + `${escapeForTerminal(status.version)}, reader ${status.reader}`
  );
}

/** The line `qrvend fleet status --json` prints. */
export function statusJsonLine(rows: readonly MachineRow[], bad: BadCounts): string {
  return `${jsonForTerminal(statusJson(rows, bad))}\n`;
}

/** The NDJSON line of `qrvend fleet watch --json`. */
export function watchJsonLine(
  record:
    | { type: 'event'; machineId: string; event: FleetEvent }
    | { type: 'presence'; machineId: string; status: StatusMessage },
): string {
  return `${jsonForTerminal(record)}\n`;
}

/** The line `qrvend fleet cmd --json` prints: the reply as received (validated). */
export function replyJsonLine(reply: CommandReply): string {
  return `${jsonForTerminal(reply)}\n`;
}

/** The reply of `qrvend fleet cmd`, as a person reads it. */
export function formatReply(reply: CommandReply, elapsedMs: number): string {
  const head = `${escapeForTerminal(reply.machineId)} ${escapeForTerminal(reply.command)}`;
  const ms = `${Math.round(elapsedMs)} ms`;
  if (!reply.ok) return `${head}: error ${reply.error.code}: ${escapeForTerminal(reply.error.message)} (${ms})\n`;
  // JSON.stringify escapes C0 controls inside strings, not bidi controls:
  // escape line by line, keep the indentation's line breaks.
  const result =
    reply.result === undefined || reply.result === null
      ? ''
      : `${JSON.stringify(reply.result, null, 2).split('\n').map(escapeForTerminal).join('\n')}\n`;
  return `${head}: ok (${ms})\n${result}`;
}
