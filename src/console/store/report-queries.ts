/**
 * What the sales, alarms, audits and rollouts pages read. Sales per day come from the daily
 * totals kept as events arrive, never from a scan of every sale.
 */
import { sql, type Kysely } from 'kysely';
import type { ConsoleDatabase } from './schema.js';

type Db = Kysely<ConsoleDatabase>;

export interface SalesQuery {
  from: string;
  to: string;
  machine: string;
  page: number;
  pageSize: number;
}

/** Sums are read as text and kept as BigInt: exact past 2^53 thousandths (docs/console.md, "How an event is kept"). */
export interface DayTotal {
  day: string;
  currency: string;
  paidCount: number;
  paidMilli: bigint;
  cashCount: number;
  cashMilli: bigint;
  deadCount: number;
  cancelledCount: number;
}

function totalsIn(db: Db, q: Pick<SalesQuery, 'from' | 'to' | 'machine'>) {
  let query = db.selectFrom('daily_totals').where('day', '>=', q.from).where('day', '<=', q.to);
  if (q.machine !== '') query = query.where('machine_id', '=', q.machine);
  return query;
}

// The amounts as text: a driver hands a 64-bit integer over as a Number (better-sqlite3), which
// rounds past 2^53, or a sum as text (pg's numeric); text is exact on both.
const SUMS = [
  sql<number>`sum(paid_count)`.as('paidCount'),
  sql<string>`cast(sum(paid_milli) as text)`.as('paidMilli'),
  sql<number>`sum(cash_count)`.as('cashCount'),
  sql<string>`cast(sum(cash_milli) as text)`.as('cashMilli'),
  sql<number>`sum(dead_count)`.as('deadCount'),
  sql<number>`sum(cancelled_count)`.as('cancelledCount'),
] as const;

/** Counts as Numbers, amounts (…Milli, read as text) as exact BigInts. */
function numbers<T>(row: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...row };
  for (const [k, v] of Object.entries(out)) {
    if (k.endsWith('Milli')) out[k] = BigInt(String(v ?? 0));
    else if (typeof v === 'bigint' || (typeof v === 'string' && k.endsWith('Count'))) out[k] = Number(v);
  }
  return out as T;
}

/** The fleet's days come from fleet_daily_totals (one row per day), a machine's from its own rows. */
export async function salesByDay(db: Db, q: SalesQuery): Promise<DayTotal[]> {
  const rows =
    q.machine === ''
      ? await db
          .selectFrom('fleet_daily_totals')
          .where('day', '>=', q.from)
          .where('day', '<=', q.to)
          .select(['day', 'currency', ...SUMS])
          .groupBy(['day', 'currency'])
          .orderBy('day')
          .execute()
      : await totalsIn(db, q)
          .select(['day', 'currency', ...SUMS])
          .groupBy(['day', 'currency'])
          .orderBy('day')
          .execute();
  return rows.map((r) => numbers<DayTotal>(r));
}

export interface MachineDayRow extends DayTotal {
  machineId: string;
}

const MACHINE_DAY = [
  'd.day',
  'd.currency',
  'd.machine_id as machineId',
  'd.paid_count as paidCount',
  sql<string>`cast(d.paid_milli as text)`.as('paidMilli'),
  'd.cash_count as cashCount',
  sql<string>`cast(d.cash_milli as text)`.as('cashMilli'),
  'd.dead_count as deadCount',
  'd.cancelled_count as cancelledCount',
] as const;

export async function salesByMachineDay(
  db: Db,
  q: SalesQuery,
  all = false,
): Promise<{ rows: MachineDayRow[]; total: number }> {
  const count = await totalsIn(db, q)
    .select(sql<number>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  const keys = totalsIn(db, q)
    .select(['day', 'machine_id', 'currency'])
    .orderBy('day', 'desc')
    .orderBy('machine_id')
    .orderBy('currency');
  // A page is found on the index daily_totals_page alone (day desc, machine_id, currency: no row
  // is read for the rows it skips, nothing sorted), then only its own rows are read.
  const page = all ? keys : keys.limit(q.pageSize).offset((q.page - 1) * q.pageSize);
  const rows = await db
    .selectFrom(page.as('k'))
    .innerJoin('daily_totals as d', (j) =>
      j.onRef('d.day', '=', 'k.day').onRef('d.machine_id', '=', 'k.machine_id').onRef('d.currency', '=', 'k.currency'),
    )
    .select([...MACHINE_DAY])
    .orderBy('d.day', 'desc')
    .orderBy('d.machine_id')
    .orderBy('d.currency')
    .execute();
  return { rows: rows.map((r) => numbers<MachineDayRow>(r)), total: Number(count.n) };
}

/** Dead-lettered payments (they need a person) in the period, newest first. */
export async function deadLettered(db: Db, q: SalesQuery, limit = 100) {
  let query = db
    .selectFrom('sales')
    .selectAll()
    .where('verdict', '=', 'dead-letter')
    .where('day', '>=', q.from)
    .where('day', '<=', q.to);
  if (q.machine !== '') query = query.where('machine_id', '=', q.machine);
  return query.orderBy('day', 'desc').limit(limit).execute();
}

/** Machines whose outbox holds payments not yet closed with the gateway (pending) or given up (dead). */
export async function unresolvedOutboxes(db: Db, limit = 100) {
  return db
    .selectFrom('machines')
    .select(['machine_id', 'outbox_pending', 'outbox_dead', 'online', 'status_at'])
    .where((eb) => eb.or([eb('outbox_pending', '>', 0), eb('outbox_dead', '>', 0)]))
    .orderBy('outbox_dead', 'desc')
    .orderBy('outbox_pending', 'desc')
    .limit(limit)
    .execute();
}

export interface AlarmQuery {
  state: 'open' | 'cleared' | 'all';
  code: string;
  page: number;
  pageSize: number;
}

export async function alarmList(db: Db, q: AlarmQuery) {
  let query = db.selectFrom('alarms');
  if (q.state === 'open') query = query.where('cleared_at', 'is', null);
  if (q.state === 'cleared') query = query.where('cleared_at', 'is not', null);
  if (q.code !== '') query = query.where('code', '=', q.code);
  const total = await query.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
  const rows = await query
    .selectAll()
    .orderBy('raised_at', 'desc')
    .limit(q.pageSize)
    .offset((q.page - 1) * q.pageSize)
    .execute();
  const open = await db
    .selectFrom('alarms')
    .select(['code', sql<number>`count(*)`.as('n')])
    .where('cleared_at', 'is', null)
    .groupBy('code')
    .orderBy('code')
    .execute();
  return { rows, total: Number(total.n), openByCode: open.map((o) => ({ code: o.code, n: Number(o.n) })) };
}

export async function auditList(db: Db, q: { verdict: string; page: number; pageSize: number }) {
  let query = db.selectFrom('audits');
  if (q.verdict !== '') query = query.where('verdict', '=', q.verdict);
  const total = await query.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
  const rows = await query
    .select(['machine_id', 'audit_id', 'at', 'check_ok', 'verdict', 'difference', 'message'])
    .orderBy('at', 'desc')
    .limit(q.pageSize)
    .offset((q.page - 1) * q.pageSize)
    .execute();
  return { rows, total: Number(total.n) };
}

/** Each machine's latest state per version on offer, from its update events. */
export async function rollouts(db: Db, version: string) {
  const versions = await db
    .selectFrom('updates')
    .select(['version', sql<number>`count(distinct machine_id)`.as('machines'), sql<string>`max(at)`.as('last')])
    .groupBy('version')
    .orderBy('last', 'desc')
    .limit(50)
    .execute();
  const chosen = version !== '' ? version : (versions[0]?.version ?? '');
  const machines = await db
    .selectFrom('updates as u')
    .select(['u.machine_id', 'u.state', 'u.at', 'u.running', 'u.detail', 'u.rollout_id'])
    .where('u.version', '=', chosen)
    .where('u.at', '=', (eb) =>
      eb
        .selectFrom('updates as v')
        .select(sql<string>`max(v.at)`.as('m'))
        .whereRef('v.version', '=', 'u.version')
        .whereRef('v.machine_id', '=', 'u.machine_id'),
    )
    .orderBy('u.machine_id')
    .limit(1000)
    .execute();
  return { versions: versions.map((v) => ({ ...v, machines: Number(v.machines) })), chosen, machines };
}
