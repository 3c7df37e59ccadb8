/**
 * Stock as the pages show it: one machine's selections (level, planned values, sales rate, days to
 * empty, the price the VMC asked against the intended one, what the last DEX audit counted beyond
 * our own events) with its recent fills; and a page of the fleet's machines, each summed up.
 */
import type { Kysely } from 'kysely';
import { daysToEmpty } from '../route/stock-math.js';
import { stateOf } from './route-queries.js';
import type { ConsoleDatabase, StockTable } from './schema.js';

type Db = Kysely<ConsoleDatabase>;

export interface StockLine {
  selection: number;
  /** Null: sold, but not in the machine's planogram. */
  productCode: string | null;
  capacity: number | null;
  par: number | null;
  threshold: number | null;
  level: number;
  filledAt: string | null;
  ratePerDay: number;
  daysToEmpty: number | null;
  intendedMilli: number | null;
  askedMilli: number | null;
  askedAt: string | null;
  /** The last audit's count for the selection against ours over its interval, or null. */
  audit: { at: string; dexVends: number; ourVends: number; correction: number } | null;
}

export interface FillRecord {
  at: string;
  by: string;
  counts: Record<string, number>;
  note: string;
}

export interface MachineStock {
  machineId: string;
  lines: StockLine[];
  fills: FillRecord[];
}

const orNull = (v: number | null | undefined) => (v === null || v === undefined ? null : Number(v));

function lineOf(s: StockTable, nowMs: number, audit: StockLine['audit']): StockLine {
  const state = stateOf(s, nowMs);
  return {
    selection: Number(s.selection),
    productCode: s.product_code ?? null,
    capacity: orNull(s.capacity),
    par: orNull(s.par),
    threshold: orNull(s.threshold),
    level: Number(s.level),
    filledAt: s.filled_at_ms === null ? null : new Date(Number(s.filled_at_ms)).toISOString(),
    ratePerDay: state.ratePerDay,
    daysToEmpty: daysToEmpty(state.level, state.ratePerDay),
    intendedMilli: orNull(s.price_milli),
    askedMilli: orNull(s.asked_price_milli),
    askedAt: s.asked_at,
    audit,
  };
}

/** The audits' rows of a machine, the latest per selection. */
async function lastAudits(db: Db, machineId: string): Promise<Map<number, NonNullable<StockLine['audit']>>> {
  const rows = await db
    .selectFrom('stock_audits')
    .selectAll()
    .where('machine_id', '=', machineId)
    .orderBy('at', 'desc')
    .limit(4000)
    .execute();
  const out = new Map<number, NonNullable<StockLine['audit']>>();
  for (const r of rows) {
    const selection = Number(r.selection);
    if (out.has(selection)) continue;
    out.set(selection, {
      at: r.at,
      dexVends: Number(r.dex_vends),
      ourVends: Number(r.our_vends),
      correction: Number(r.correction),
    });
  }
  return out;
}

export async function recentFills(db: Db, machineId: string, limit = 10): Promise<FillRecord[]> {
  const rows = await db
    .selectFrom('fills')
    .selectAll()
    .where('machine_id', '=', machineId)
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((f) => {
    let counts: Record<string, number> = {};
    try {
      counts = JSON.parse(f.counts) as Record<string, number>;
    } catch {
      counts = {};
    }
    return { at: f.at, by: f.by_user, counts, note: f.note };
  });
}

export async function machineStock(db: Db, machineId: string, nowMs: number): Promise<MachineStock> {
  const [rows, audits, fills] = await Promise.all([
    db.selectFrom('stock').selectAll().where('machine_id', '=', machineId).orderBy('selection').limit(4096).execute(),
    lastAudits(db, machineId),
    recentFills(db, machineId),
  ]);
  return { machineId, lines: rows.map((s) => lineOf(s, nowMs, audits.get(Number(s.selection)) ?? null)), fills };
}

export interface MachineStockSummary {
  machineId: string;
  templateId: string;
  selections: number;
  below: number;
  /** The soonest a selection is empty at its rate (days), or null when none sells. */
  soonestEmptyDays: number | null;
  pricesDiffer: number;
  lastFillAt: string | null;
}

/** A page of the machines that have a planogram, each summed up; and how many there are. */
export async function fleetStock(
  db: Db,
  o: { nowMs: number; limit: number; offset: number; q: string },
): Promise<{ rows: MachineStockSummary[]; total: number }> {
  let machines = db.selectFrom('machine_templates').select(['machine_id', 'template_id']);
  if (o.q !== '') machines = machines.where('machine_id', 'like', `%${o.q.replace(/[\\%_]/g, '')}%`);
  const [page, count] = await Promise.all([
    machines.orderBy('machine_id').limit(o.limit).offset(o.offset).execute(),
    db
      .selectFrom(machines.as('m'))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  const ids = page.map((m) => m.machine_id);
  const rows =
    ids.length === 0 ? [] : await db.selectFrom('stock').selectAll().where('machine_id', 'in', ids).execute();
  const byMachine = new Map<string, StockTable[]>();
  for (const r of rows) byMachine.set(r.machine_id, [...(byMachine.get(r.machine_id) ?? []), r]);
  const summaries = page.map((m) => {
    const planned = (byMachine.get(m.machine_id) ?? []).filter((s) => s.product_code != null);
    const lines = planned.map((s) => lineOf(s, o.nowMs, null));
    const days = lines.map((l) => l.daysToEmpty).filter((d): d is number => d !== null);
    const fills = planned.map((s) => s.filled_at_ms).filter((f): f is number => f !== null);
    return {
      machineId: m.machine_id,
      templateId: m.template_id,
      selections: planned.length,
      below: lines.filter((l) => l.level < (l.threshold ?? 0)).length,
      soonestEmptyDays: days.length === 0 ? null : Math.min(...days),
      pricesDiffer: lines.filter((l) => l.askedMilli !== null && l.askedMilli !== l.intendedMilli).length,
      lastFillAt: fills.length === 0 ? null : new Date(Math.max(...fills.map(Number))).toISOString(),
    };
  });
  return { rows: summaries, total: Number(count.n) };
}
