/**
 * The conditions an alert rule can watch, and where each machine stands now (docs/console.md
 * "Alert rules"). Each kind reads what ingest already keeps (open alarms, the machines' status,
 * last sale and outbox, the audits' verdicts) and answers, per machine, since when it holds, a
 * line of detail, and the page that shows it.
 *
 * Adding a kind: a name in CONDITION_KINDS, its label and advice in CONDITIONS, and its query in
 * `holdingNow`'s switch. Its machines are filtered by the rule's scope like every other kind's
 * (`inScope`: the rule's machines and its route's).
 */
import { sql, type Kysely } from 'kysely';
import type { ConsoleDatabase } from '../store/schema.js';
import type { AlertRulesTable } from '../store/reach-schema.js';
import { ALARM_ADVICE, adviceFor } from '../web/alarm-advice.js';
import { pricesDiffering, routeOf, selectionStates } from '../store/route-queries.js';
import { money } from '../web/html.js';
import { msInHours, type Hours } from './business-hours.js';

export const CONDITION_KINDS = [
  'alarm',
  'offline',
  'no-sale',
  'dead-letter',
  'audit-mismatch',
  'stock-low',
  'price-differs',
] as const;
export type ConditionKind = (typeof CONDITION_KINDS)[number];

export const CONDITIONS: Record<ConditionKind, { label: string; advice: string }> = {
  alarm: { label: 'an alarm is raised', advice: '' },
  offline: {
    label: 'the machine is offline longer than the threshold',
    advice:
      "Check the machine's power and network; its agent keeps every sale in its outbox and sends it when back " +
      '(qrvend doctor on the machine).',
  },
  'no-sale': {
    label: 'no sale for the threshold, counted inside the rule hours',
    advice: 'Check that the machine can sell: its reader state and alarms on its page, the stock, the display.',
  },
  'dead-letter': { label: 'a payment is dead-lettered', advice: ALARM_ADVICE.OUTBOX_DEAD_LETTER },
  'audit-mismatch': { label: "the machine's audit disagrees with its ledger", advice: ALARM_ADVICE.AUDIT_MISMATCH },
  'stock-low': {
    label: 'a selection is below its stock threshold',
    advice: "Fill the machine on the route's next visit (its pick list), or record a fill if it was filled.",
  },
  'price-differs': {
    label: "the VMC asks another price than the planogram's",
    advice: "Set the VMC's price for the selection to the planogram's, or change the planogram (docs/console.md).",
  },
};

export interface Holding {
  since: number;
  detail: string;
  /** The console page that shows it (a path). */
  page: string;
  advice: string;
}

type Db = Kysely<ConsoleDatabase>;
export type RuleRow = Omit<AlertRulesTable, 'id'> & { id: number };

export function hoursOf(rule: RuleRow): Hours {
  return {
    days: rule.days.split(',').map(Number),
    fromMinute: rule.from_minute,
    toMinute: rule.to_minute,
    zone: rule.time_zone,
  };
}

/** The machines a rule watches: its list and its route's machines; every machine when it names neither. */
export async function inScope(db: Db, rule: RuleRow): Promise<(machineId: string) => boolean> {
  const listed = new Set(
    rule.machines
      .split(',')
      .map((m) => m.trim())
      .filter((m) => m !== ''),
  );
  if (rule.route_id !== '') {
    const route = await routeOf(db, rule.route_id);
    for (const m of route?.machines ?? []) listed.add(m);
    // A route that no longer exists watches nothing rather than everything.
    if (route === null && listed.size === 0) return () => false;
  }
  if (listed.size === 0) return () => true;
  return (id) => listed.has(id);
}

const machinePage = (id: string) => `/machines/${encodeURIComponent(id)}`;
const ms = (iso: string | null | undefined) => (iso == null ? NaN : Date.parse(iso));

async function openAlarms(db: Db, code: string): Promise<Map<string, Holding>> {
  let q = db
    .selectFrom('alarms')
    .select(['machine_id', 'code', 'raised_at', 'raised_detail'])
    .where('cleared_at', 'is', null);
  if (code !== '') q = q.where('code', '=', code);
  const out = new Map<string, Holding>();
  for (const a of await q.orderBy('raised_at').execute()) {
    const had = out.get(a.machine_id);
    const line = `${a.code}${a.raised_detail ? `: ${a.raised_detail}` : ''}`;
    if (had !== undefined) had.detail += `; ${line}`;
    else
      out.set(a.machine_id, {
        since: ms(a.raised_at),
        detail: line,
        page: machinePage(a.machine_id),
        advice: adviceFor(a.code),
      });
  }
  return out;
}

async function offline(db: Db, rule: RuleRow, now: number): Promise<Map<string, Holding>> {
  const cutoff = new Date(now - rule.threshold_minutes * 60_000).toISOString();
  const rows = await db
    .selectFrom('machines')
    .select(['machine_id', sql<string>`coalesce(online_since, seen_at)`.as('since')])
    .where('online', '=', 0)
    .where(sql<string>`coalesce(online_since, seen_at)`, '<=', cutoff)
    .execute();
  const advice = CONDITIONS.offline.advice;
  return new Map(
    rows.map((r) => [
      r.machine_id,
      { since: ms(r.since), detail: 'offline (its last will)', page: machinePage(r.machine_id), advice },
    ]),
  );
}

async function noSale(db: Db, rule: RuleRow, now: number): Promise<Map<string, Holding>> {
  const needMs = rule.threshold_minutes * 60_000;
  const rows = await db
    .selectFrom('machines')
    .select(['machine_id', 'last_sale_at'])
    .where('last_sale_at', 'is not', null)
    .where('last_sale_at', '<=', new Date(now - needMs).toISOString())
    .execute();
  const hours = hoursOf(rule);
  const out = new Map<string, Holding>();
  for (const r of rows) {
    const last = ms(r.last_sale_at);
    if (Number.isNaN(last) || msInHours(last, now, hours) < needMs) continue;
    const detail = `no sale for ${Math.round(needMs / 60_000)} minutes of the rule's hours`;
    out.set(r.machine_id, {
      since: last,
      detail,
      page: machinePage(r.machine_id),
      advice: CONDITIONS['no-sale'].advice,
    });
  }
  return out;
}

async function deadLetters(db: Db): Promise<Map<string, Holding>> {
  const rows = await db
    .selectFrom('machines')
    .select(['machine_id', 'outbox_dead', 'status_at', 'seen_at'])
    .where('outbox_dead', '>', 0)
    .execute();
  return new Map(
    rows.map((r) => [
      r.machine_id,
      {
        since: ms(r.status_at ?? r.seen_at),
        detail: `${r.outbox_dead} payment(s) dead-lettered in its outbox`,
        page: `/sales?machine=${encodeURIComponent(r.machine_id)}`,
        advice: CONDITIONS['dead-letter'].advice,
      },
    ]),
  );
}

async function auditMismatches(db: Db): Promise<Map<string, Holding>> {
  const rows = await db
    .selectFrom('audits as a')
    .select(['a.machine_id', 'a.at', 'a.difference', 'a.message'])
    .where('a.verdict', '=', 'mismatch')
    .where('a.at', '=', (eb) =>
      eb
        .selectFrom('audits as b')
        .select(sql<string>`max(b.at)`.as('m'))
        .whereRef('b.machine_id', '=', 'a.machine_id'),
    )
    .execute();
  return new Map(
    rows.map((r) => [
      r.machine_id,
      {
        since: ms(r.at),
        detail: `the latest audit differs by ${r.difference ?? '?'}${r.message ? `: ${r.message}` : ''}`,
        page: '/audits?verdict=mismatch',
        advice: CONDITIONS['audit-mismatch'].advice,
      },
    ]),
  );
}

async function lowStock(db: Db, now: number): Promise<Map<string, Holding>> {
  const planned = await db.selectFrom('machine_templates').select('machine_id').execute();
  const out = new Map<string, Holding>();
  const states = await selectionStates(
    db,
    planned.map((p) => p.machine_id),
    now,
  );
  for (const s of states.filter((x) => x.level < x.threshold)) {
    const line = `selection ${s.selection} (${s.productCode}): ${s.level} left, threshold ${s.threshold}`;
    const had = out.get(s.machineId);
    if (had !== undefined) had.detail += `; ${line}`;
    else
      out.set(s.machineId, {
        since: now,
        detail: line,
        page: machinePage(s.machineId),
        advice: CONDITIONS['stock-low'].advice,
      });
  }
  return out;
}

async function pricesOff(db: Db): Promise<Map<string, Holding>> {
  const out = new Map<string, Holding>();
  for (const p of await pricesDiffering(db)) {
    const asked = money(p.askedMilli);
    const line = `selection ${p.selection}: the VMC asks ${asked}, the planogram says ${money(p.intendedMilli)}`;
    const had = out.get(p.machineId);
    if (had !== undefined) had.detail += `; ${line}`;
    else {
      const advice = CONDITIONS['price-differs'].advice;
      out.set(p.machineId, { since: ms(p.askedAt), detail: line, page: machinePage(p.machineId), advice });
    }
  }
  return out;
}

/** Where each machine in the rule's scope stands now: the machines whose condition holds. */
export async function holdingNow(db: Db, rule: RuleRow, now: number): Promise<Map<string, Holding>> {
  let all: Map<string, Holding>;
  switch (rule.condition as ConditionKind) {
    case 'alarm':
      all = await openAlarms(db, rule.alarm_code);
      break;
    case 'offline':
      all = await offline(db, rule, now);
      break;
    case 'no-sale':
      all = await noSale(db, rule, now);
      break;
    case 'dead-letter':
      all = await deadLetters(db);
      break;
    case 'audit-mismatch':
      all = await auditMismatches(db);
      break;
    case 'stock-low':
      all = await lowStock(db, now);
      break;
    case 'price-differs':
      all = await pricesOff(db);
      break;
    default:
      all = new Map();
  }
  const scoped = await inScope(db, rule);
  for (const id of [...all.keys()]) if (!scoped(id)) all.delete(id);
  for (const h of all.values()) if (Number.isNaN(h.since)) h.since = now;
  return all;
}
