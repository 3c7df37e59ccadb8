/**
 * Stock kept at ingest (docs/console.md, "A day on the route"), in the transaction of the events
 * it comes from (./event-batch.ts): every vend the console learns of lowers its selection's level
 * (a QR sale's charged vends, a cash sale), and the price the VMC asked is kept (the "price
 * differs" list); a DEX audit's per-selection vend counts over its interval correct the level by
 * what they counted beyond our own events (src/console/route/stock-math.ts). A QR payment counts
 * once: a dead-lettered sale accepted later is the same payment (`tx:<txId>`).
 */
import { sql, type Transaction } from 'kysely';
import type { AuditEvent } from '../../fleet/contract/index.js';
import { auditCorrection } from '../route/stock-math.js';
import { toMilli, type IncomingEvent } from './event-rows.js';
import type { ConsoleDatabase, StockVendsTable } from './schema.js';

type Tx = Transaction<ConsoleDatabase>;

/** The item number without MDB's flag bits (free, test, negative, token vends: bits 15-12). */
const SELECTION_MASK = 0x0fff;
const CHARGED = new Set(['success', 'reset']);

interface Vend extends StockVendsTable {
  priceMilli: number | null;
  at: string;
}

/**
 * One vend's price in thousandths. A Number holds it exactly: a price is at most 12 digits and 3
 * decimals (toMilli), below 2^53 thousandths; only sums of prices need toMilli's BigInt.
 */
function priceMilli(price: string): number | null {
  const milli = toMilli(price);
  return milli === null ? null : Number(milli);
}

function atMs(e: IncomingEvent): number {
  const t = Date.parse(e.event.at);
  return Number.isFinite(t) ? t : Date.parse(e.receivedAt);
}

/** The vends of one event, one row per selection. */
function vendsOf(e: IncomingEvent): Vend[] {
  const { event, machineId } = e;
  const at = atMs(e);
  if (event.kind === 'cash-sale') {
    const selection = event.item & SELECTION_MASK;
    const price = priceMilli(event.price);
    return [
      {
        machine_id: machineId,
        event_id: `ev:${event.eventId}`,
        selection,
        at_ms: at,
        count: 1,
        priceMilli: price,
        at: event.at,
      },
    ];
  }
  if (event.kind !== 'sale') return [];
  const bySelection = new Map<number, Vend>();
  for (const p of event.products) {
    if (!CHARGED.has(p.outcome)) continue;
    const selection = p.item & SELECTION_MASK;
    const v = bySelection.get(selection);
    if (v !== undefined) v.count += 1;
    else {
      const row = { machine_id: machineId, event_id: `tx:${event.txId}`, selection, at_ms: at, count: 1 };
      bySelection.set(selection, { ...row, priceMilli: priceMilli(p.price), at: event.at });
    }
  }
  return [...bySelection.values()];
}

/** Lowers the levels by the batch's vends (each payment or event once) and keeps the prices asked. */
async function lowerByVends(tx: Tx, fresh: IncomingEvent[]): Promise<void> {
  const vends = fresh.flatMap(vendsOf);
  if (vends.length === 0) return;
  const inserted = await tx
    .insertInto('stock_vends')
    .values(vends.map(({ priceMilli: _p, at: _a, ...row }) => row))
    .onConflict((oc) => oc.columns(['machine_id', 'event_id', 'selection']).doNothing())
    .returning(['machine_id', 'event_id', 'selection'])
    .execute();
  const counted = new Set(inserted.map((r) => JSON.stringify([r.machine_id, r.event_id, r.selection])));
  const sums = new Map<
    string,
    { machine_id: string; selection: number; n: number; since: number; price: number | null; at: string }
  >();
  for (const v of vends) {
    if (!counted.has(JSON.stringify([v.machine_id, v.event_id, v.selection]))) continue;
    const key = JSON.stringify([v.machine_id, v.selection]);
    const s = sums.get(key) ?? {
      machine_id: v.machine_id,
      selection: v.selection,
      n: 0,
      since: v.at_ms,
      price: null,
      at: '',
    };
    s.n += v.count;
    s.since = Math.min(s.since, v.at_ms);
    if (v.priceMilli !== null && v.at >= s.at) {
      s.price = v.priceMilli;
      s.at = v.at;
    }
    sums.set(key, s);
  }
  if (sums.size === 0) return;
  // In key order: two instances upserting the same rows lock them in one order.
  const rows = [...sums.keys()].sort().map((k) => sums.get(k)!);
  await tx
    .insertInto('stock')
    .values(
      rows.map((s) => ({
        machine_id: s.machine_id,
        selection: s.selection,
        level: -s.n,
        cycle_vends: s.n,
        cycle_since_ms: s.since,
        prev_vends: 0,
        prev_ms: 0,
        filled_at_ms: null,
        asked_price_milli: s.price,
        asked_at: s.price === null ? null : s.at,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['machine_id', 'selection']).doUpdateSet({
        level: sql`stock.level - excluded.cycle_vends`,
        cycle_vends: sql`stock.cycle_vends + excluded.cycle_vends`,
        asked_price_milli: sql`case when excluded.asked_at is not null and (stock.asked_at is null
          or stock.asked_at <= excluded.asked_at) then excluded.asked_price_milli else stock.asked_price_milli end`,
        asked_at: sql`case when excluded.asked_at is not null and (stock.asked_at is null
          or stock.asked_at <= excluded.asked_at) then excluded.asked_at else stock.asked_at end`,
      }),
    )
    .execute();
}

/** The interval's per-selection vends the audit reports (interval.kind "sales"), or null. */
function auditInterval(e: AuditEvent): { fromMs: number; toMs: number; products: Record<string, number> } | null {
  if (e.part !== 0 || e.summary === null) return null;
  const interval = e.summary.interval as
    { kind?: unknown; elapsedMs?: unknown; sales?: { products?: unknown } } | undefined;
  if (interval?.kind !== 'sales' || typeof interval.elapsedMs !== 'number') return null;
  const products = interval.sales?.products;
  if (typeof products !== 'object' || products === null) return null;
  const toMs = Date.parse(e.at);
  if (!Number.isFinite(toMs)) return null;
  return { fromMs: toMs - interval.elapsedMs, toMs, products: products as Record<string, number> };
}

/** The audit is the authority over its interval: each selection's level corrected, the difference kept. */
async function correctByAudit(tx: Tx, machineId: string, e: AuditEvent): Promise<void> {
  const interval = auditInterval(e);
  if (interval === null) return;
  for (const [key, dex] of Object.entries(interval.products).slice(0, 1000)) {
    if (!/^\d{1,5}$/.test(key) || !Number.isSafeInteger(dex) || dex < 0) continue;
    const selection = Number(key);
    const ours = await tx
      .selectFrom('stock_vends')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('count'), sql<number>`0`).as('n'))
      .where('machine_id', '=', machineId)
      .where('selection', '=', selection)
      .where('at_ms', '>', interval.fromMs)
      .where('at_ms', '<=', interval.toMs)
      .executeTakeFirst();
    const stock = await tx
      .selectFrom('stock')
      .select('filled_at_ms')
      .where('machine_id', '=', machineId)
      .where('selection', '=', selection)
      .executeTakeFirst();
    const ourVends = Number(ours?.n ?? 0);
    const fill = stock?.filled_at_ms == null ? null : Number(stock.filled_at_ms);
    const correction = auditCorrection(interval, dex, ourVends, fill);
    await tx
      .insertInto('stock_audits')
      .values({
        machine_id: machineId,
        audit_id: e.auditId,
        selection,
        at: e.at,
        dex_vends: dex,
        our_vends: ourVends,
        correction,
      })
      .onConflict((oc) => oc.columns(['machine_id', 'audit_id', 'selection']).doNothing())
      .execute();
    if (correction === 0 || stock === undefined) continue;
    await tx
      .updateTable('stock')
      .set({ level: sql`level - ${correction}`, cycle_vends: sql`cycle_vends + ${correction}` })
      .where('machine_id', '=', machineId)
      .where('selection', '=', selection)
      .execute();
  }
}

/** Everything stock takes from a batch's new events, inside the batch's transaction. */
export async function keepStock(tx: Tx, fresh: IncomingEvent[]): Promise<void> {
  await lowerByVends(tx, fresh);
  for (const e of fresh) if (e.event.kind === 'audit') await correctByAudit(tx, e.machineId, e.event);
}
