/**
 * What the read API lists (docs/console.md "The API"), a page at a time by cursor: each list is
 * in one order on an index, and the cursor is the last row's key in that order, so a page costs
 * its own rows whatever the page's depth. The figures are those of the pages and the CSV (the
 * daily totals are salesByMachineDay's rows, the same columns).
 */
import { sql, type Kysely } from 'kysely';
import type { ConsoleDatabase } from './schema.js';

type Db = Kysely<ConsoleDatabase>;

export async function machinesPage(db: Db, after: string | null, limit: number) {
  let q = db.selectFrom('machines').selectAll();
  if (after !== null) q = q.where('machine_id', '>', after);
  return q.orderBy('machine_id').limit(limit).execute();
}

export async function machineRow(db: Db, id: string) {
  return db.selectFrom('machines').selectAll().where('machine_id', '=', id).executeTakeFirst();
}

export async function statusesPage(db: Db, machine: string, before: number | null, limit: number) {
  let q = db.selectFrom('status_history').selectAll();
  if (machine !== '') q = q.where('machine_id', '=', machine);
  if (before !== null) q = q.where('id', '<', before);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

export interface PeriodQuery {
  from: string;
  to: string;
  machine: string;
}

/** Sales of the period in (day, machine, eventId) order after the cursor's key (the sales_api index). */
export async function salesPage(db: Db, q: PeriodQuery, after: [string, string, string] | null, limit: number) {
  let query = db.selectFrom('sales').selectAll().where('day', '>=', q.from).where('day', '<=', q.to);
  if (q.machine !== '') query = query.where('machine_id', '=', q.machine);
  if (after !== null) {
    const [day, machine, eventId] = after;
    query = query.where((eb) =>
      eb.or([
        eb('day', '>', day),
        eb.and([eb('day', '=', day), eb('machine_id', '>', machine)]),
        eb.and([eb('day', '=', day), eb('machine_id', '=', machine), eb('event_id', '>', eventId)]),
      ]),
    );
  }
  return query.orderBy('day').orderBy('machine_id').orderBy('event_id').limit(limit).execute();
}

/** The CSV's rows (machine, day, currency): newest day first, as the sales page and its export. */
export async function dailyPage(db: Db, q: PeriodQuery, after: [string, string, string] | null, limit: number) {
  let query = db.selectFrom('daily_totals').selectAll().where('day', '>=', q.from).where('day', '<=', q.to);
  if (q.machine !== '') query = query.where('machine_id', '=', q.machine);
  if (after !== null) {
    const [day, machine, currency] = after;
    query = query.where((eb) =>
      eb.or([
        eb('day', '<', day),
        eb.and([eb('day', '=', day), eb('machine_id', '>', machine)]),
        eb.and([eb('day', '=', day), eb('machine_id', '=', machine), eb('currency', '>', currency)]),
      ]),
    );
  }
  return query.orderBy('day', 'desc').orderBy('machine_id').orderBy('currency').limit(limit).execute();
}

export async function alarmsPage(db: Db, state: string, code: string, before: number | null, limit: number) {
  let q = db.selectFrom('alarms').selectAll();
  if (state === 'open') q = q.where('cleared_at', 'is', null);
  if (state === 'cleared') q = q.where('cleared_at', 'is not', null);
  if (code !== '') q = q.where('code', '=', code);
  if (before !== null) q = q.where('id', '<', before);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

export async function auditsPage(db: Db, verdict: string, after: [string, string, string] | null, limit: number) {
  let q = db
    .selectFrom('audits')
    .select(['machine_id', 'audit_id', 'event_id', 'at', 'check_ok', 'verdict', 'difference', 'message']);
  if (verdict !== '') q = q.where('verdict', '=', verdict);
  if (after !== null) {
    const [at, machine, auditId] = after;
    q = q.where((eb) =>
      eb.or([
        eb('at', '<', at),
        eb.and([eb('at', '=', at), eb('machine_id', '>', machine)]),
        eb.and([eb('at', '=', at), eb('machine_id', '=', machine), eb('audit_id', '>', auditId)]),
      ]),
    );
  }
  return q.orderBy('at', 'desc').orderBy('machine_id').orderBy('audit_id').limit(limit).execute();
}

export async function updateVersions(db: Db) {
  const rows = await db
    .selectFrom('updates')
    .select(['version', sql<number>`count(distinct machine_id)`.as('machines'), sql<string>`max(at)`.as('last')])
    .groupBy('version')
    .orderBy('last', 'desc')
    .limit(200)
    .execute();
  return rows.map((r) => ({ ...r, machines: Number(r.machines) }));
}
