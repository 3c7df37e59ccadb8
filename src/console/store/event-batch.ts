/**
 * Group commit (docs/console.md, "Ingest"): the events that arrived together are written in one
 * transaction, each with what derives from it, so one commit pays for many events. Sales and cash
 * sales, nearly all the traffic, are written set by set: one multi-row statement each for the
 * events, the machines (their last sale), the sales and the day's totals (summed per machine,
 * day and currency first), whatever the batch's size. All or nothing: when the transaction fails
 * no event of the batch is stored. An eventId seen before, in an earlier batch or earlier in this
 * one, is a no-op (the (machine, eventId) key), so the totals count each event once.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { CashSaleEvent, SaleEvent } from '../../fleet/contract/index.js';
import { appendToFeed } from './feed-queries.js';
import { dayOf, storeAlarm, storeAudit, storeUpdate, toMilli, type IncomingEvent } from './event-rows.js';
import type { ConsoleDatabase, DailyTotalsTable, FleetDailyTotalsTable, SalesTable } from './schema.js';
import { keepStock } from './stock-ingest.js';

type Tx = Transaction<ConsoleDatabase>;
type Totals = Omit<DailyTotalsTable, 'day' | 'machine_id' | 'currency'>;

const keyOf = (e: IncomingEvent) => JSON.stringify([e.machineId, e.event.eventId]);

function saleRow(e: IncomingEvent, day: string): SalesTable | null {
  const { event, machineId } = e;
  if (event.kind === 'sale') {
    const s: SaleEvent = event;
    return {
      machine_id: machineId,
      event_id: s.eventId,
      kind: 'qr',
      day,
      at: s.at,
      tx_id: s.txId,
      flow: s.flow,
      amount: s.amount,
      amount_milli: toMilli(s.amount) ?? 0n,
      currency: s.currency,
      closing: s.closing,
      verdict: s.verdict,
      item: s.products[0]?.item ?? null,
    };
  }
  if (event.kind !== 'cash-sale') return null;
  const c: CashSaleEvent = event;
  return {
    machine_id: machineId,
    event_id: c.eventId,
    kind: 'cash',
    day,
    at: c.at,
    tx_id: null,
    flow: null,
    amount: c.price,
    amount_milli: toMilli(c.price) ?? 0n,
    currency: c.currency,
    closing: null,
    verdict: null,
    item: c.item,
  };
}

function zeroTotals(): Totals {
  return {
    paid_count: 0,
    paid_milli: 0n,
    cash_count: 0,
    cash_milli: 0n,
    cancelled_count: 0,
    dead_count: 0,
    dead_milli: 0n,
  };
}

/** What one sale adds to its day: paid, cancelled or dead-lettered (a QR sale), or cash; in exact BigInt. */
function addTo(t: Totals, row: SalesTable): void {
  const milli = BigInt(row.amount_milli);
  if (row.kind === 'cash') {
    t.cash_count++;
    t.cash_milli += milli;
  } else if (row.verdict === 'dead-letter') {
    t.dead_count++;
    t.dead_milli += milli;
  } else if (row.closing === 'settlement') {
    t.paid_count++;
    t.paid_milli += milli;
  } else t.cancelled_count++;
}

/** A sale closed with money (settled QR or cash) moves the machine's last sale. */
const isLastSale = (row: SalesTable) => row.kind === 'cash' || row.closing === 'settlement';

/** Rows summed per key, in key order: two instances upserting the same rows lock them in one order (no deadlock). */
function sumBy<T extends Totals>(
  rows: SalesTable[],
  key: (row: SalesTable) => string[],
  make: (row: SalesTable) => T,
): T[] {
  const sums = new Map<string, T>();
  for (const row of rows) {
    const k = JSON.stringify(key(row));
    let t = sums.get(k);
    if (t === undefined) sums.set(k, (t = make(row)));
    addTo(t, row);
  }
  return [...sums.keys()].sort().map((k) => sums.get(k)!);
}

function plusExcluded(table: 'daily_totals' | 'fleet_daily_totals'): Record<string, unknown> {
  const set: Record<string, unknown> = {};
  for (const c of Object.keys(zeroTotals())) set[c] = sql`${sql.table(table)}.${sql.ref(c)} + excluded.${sql.ref(c)}`;
  return set;
}

/** The machine's day and the fleet's day, both in the sale's transaction. */
async function addDailyTotals(tx: Tx, rows: SalesTable[]): Promise<void> {
  if (rows.length === 0) return;
  const perMachine: DailyTotalsTable[] = sumBy(
    rows,
    (r) => [r.day, r.machine_id, r.currency],
    (r) => ({ day: r.day, machine_id: r.machine_id, currency: r.currency, ...zeroTotals() }),
  );
  await tx
    .insertInto('daily_totals')
    .values(perMachine)
    .onConflict((oc) => oc.columns(['day', 'machine_id', 'currency']).doUpdateSet(plusExcluded('daily_totals')))
    .execute();
  const fleet: FleetDailyTotalsTable[] = sumBy(
    rows,
    (r) => [r.day, r.currency],
    (r) => ({ day: r.day, currency: r.currency, ...zeroTotals() }),
  );
  await tx
    .insertInto('fleet_daily_totals')
    .values(fleet)
    .onConflict((oc) => oc.columns(['day', 'currency']).doUpdateSet(plusExcluded('fleet_daily_totals')))
    .execute();
}

/** Every machine of the batch exists; its last sale moves forward only (text order of ISO times). */
async function upsertMachines(tx: Tx, fresh: IncomingEvent[], rows: SalesTable[]): Promise<void> {
  const machines = new Map<string, { seen: string; lastSale: string | null }>();
  for (const e of fresh) {
    if (!machines.has(e.machineId)) machines.set(e.machineId, { seen: e.receivedAt, lastSale: null });
  }
  for (const row of rows) {
    const m = machines.get(row.machine_id);
    if (m !== undefined && isLastSale(row) && (m.lastSale === null || m.lastSale < row.at)) m.lastSale = row.at;
  }
  if (machines.size === 0) return;
  const values = [...machines]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([machineId, m]) => ({
      machine_id: machineId,
      online: 0,
      alarms: '',
      seen_at: m.seen,
      outbox_pending: 0,
      outbox_dead: 0,
      disabled_remotely: 0,
      last_sale_at: m.lastSale,
    }));
  await tx
    .insertInto('machines')
    .values(values)
    .onConflict((oc) =>
      oc.column('machine_id').doUpdateSet({
        last_sale_at: sql`case when excluded.last_sale_at is not null and (machines.last_sale_at is null
          or machines.last_sale_at < excluded.last_sale_at) then excluded.last_sale_at else machines.last_sale_at end`,
      }),
    )
    .execute();
}

async function insertNew(tx: Tx, unique: IncomingEvent[]): Promise<Set<string>> {
  const inserted = await tx
    .insertInto('events')
    .values(
      unique.map((e) => ({
        machine_id: e.machineId,
        event_id: e.event.eventId,
        kind: e.event.kind,
        at: e.event.at,
        received_at: e.receivedAt,
        payload: e.raw,
      })),
    )
    .onConflict((oc) => oc.columns(['machine_id', 'event_id']).doNothing())
    .returning(['machine_id', 'event_id'])
    .execute();
  return new Set(inserted.map((r) => JSON.stringify([r.machine_id, r.event_id])));
}

async function writeBatch(tx: Tx, events: IncomingEvent[]): Promise<boolean[]> {
  const first = new Map<string, IncomingEvent>();
  for (const e of events) if (!first.has(keyOf(e))) first.set(keyOf(e), e);
  const isNew = await insertNew(
    tx,
    [...first.keys()].sort().map((k) => first.get(k)!),
  );
  const fresh = [...first.values()].filter((e) => isNew.has(keyOf(e)));
  const rows = fresh.flatMap((e) => saleRow(e, dayOf(e.event.at, e.receivedAt)) ?? []);
  await upsertMachines(tx, fresh, rows);
  if (rows.length > 0) await tx.insertInto('sales').values(rows).execute();
  await addDailyTotals(tx, rows);
  // Stock, from the same new events (./stock-ingest.ts): one more statement pair per batch.
  await keepStock(tx, fresh);
  // Alarms, audits and updates in the order they came: a clear follows its raise.
  for (const e of fresh) {
    if (e.event.kind === 'alarm') await storeAlarm(tx, e.machineId, e.event);
    else if (e.event.kind === 'audit') await storeAudit(tx, e.machineId, e.event);
    else if (e.event.kind === 'update') await storeUpdate(tx, e.machineId, e.event);
  }
  const stored = events.map((e) => first.get(keyOf(e)) === e && isNew.has(keyOf(e)));
  // Last, so the feed's counter row is held only to the commit (./feed-queries.ts); in the order they came.
  await appendToFeed(
    tx,
    events.filter((_e, i) => stored[i]).map((e) => ({ machineId: e.machineId, eventId: e.event.eventId })),
  );
  return stored;
}

/** For each event in order: true when stored now, false when it was a redelivery. Throws when nothing committed. */
export async function storeEventBatch(db: Kysely<ConsoleDatabase>, events: IncomingEvent[]): Promise<boolean[]> {
  if (events.length === 0) return [];
  return db.transaction().execute((tx) => writeBatch(tx, events));
}

const DATABASE_DOWN_SQLITE = /^SQLITE_(IOERR|FULL|BUSY|LOCKED|CANTOPEN|READONLY|CORRUPT|NOTADB|PROTOCOL|NOMEM)/;

/**
 * Whether a failure says the database itself is unavailable (a lost server, a full or locked
 * disk) rather than refusing this one event: then no event is to blame and none is given up.
 * PostgreSQL's classes 08 (connection), 53 (resources), 57 (operator intervention: a restart),
 * 58 (system error); a Node socket error (E...); a pg client error with no code at all.
 */
export function databaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return true;
  if (code.startsWith('SQLITE_')) return DATABASE_DOWN_SQLITE.test(code);
  if (/^E[A-Z]+$/.test(code)) return true;
  return /^(08|53|57|58)/.test(code);
}

/**
 * Whether a failure is the row's own: the database refused what it was given and would refuse
 * it every time (PostgreSQL class 22 data exception, 23 integrity constraint, 54 program limit;
 * SQLite constraint, too big, type mismatch, range). Anything else, a lost connection included,
 * is not the message's fault: it stays unacknowledged and comes again.
 */
export function refusedByDatabase(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  if (code.startsWith('SQLITE_')) return /^SQLITE_(CONSTRAINT|TOOBIG|MISMATCH|RANGE)/.test(code);
  return /^(22|23|54)[0-9A-Z]{3}$/.test(code);
}
