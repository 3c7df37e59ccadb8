/**
 * What ingest writes: each event in one transaction with everything derived from it (the sale
 * and its day's totals, the alarm's open/cleared row, the audit's verdict, the update's state),
 * so an event is either wholly stored or not at all. The (machine, eventId) key makes a
 * redelivered event a no-op: the totals count it once.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type {
  AlarmEvent,
  AuditEvent,
  CashSaleEvent,
  FleetEvent,
  SaleEvent,
  StatusMessage,
  UpdateEvent,
} from '../../fleet/contract/index.js';
import type { ConsoleDatabase } from './schema.js';

type Db = Kysely<ConsoleDatabase>;
type Tx = Transaction<ConsoleDatabase>;

/** Decimal text with at most 3 decimals (every ISO 4217 currency) -> integer thousandths; null if not one. */
export function toMilli(amount: string): number | null {
  const m = /^(\d{1,12})(?:\.(\d{1,3}))?$/.exec(amount);
  if (m === null) return null;
  return Number(m[1]) * 1000 + Number((m[2] ?? '').padEnd(3, '0'));
}

/** The UTC day of the sender's `at` when it is an ISO date, else of the time we received it. */
export function dayOf(at: string, receivedAt: string): string {
  return /^\d{4}-\d{2}-\d{2}T/.test(at) ? at.slice(0, 10) : receivedAt.slice(0, 10);
}

/** Why an event that passed the contract still cannot be stored, or null. */
export function eventProblem(event: FleetEvent): string | null {
  if (event.kind === 'sale' && toMilli(event.amount) === null) return 'amount: not a decimal with at most 3 decimals';
  if (event.kind === 'cash-sale' && toMilli(event.price) === null)
    return 'price: not a decimal with at most 3 decimals';
  return null;
}

async function ensureMachine(tx: Tx, machineId: string, receivedAt: string): Promise<void> {
  await tx
    .insertInto('machines')
    .values({
      machine_id: machineId,
      online: 0,
      alarms: '',
      seen_at: receivedAt,
      outbox_pending: 0,
      outbox_dead: 0,
      disabled_remotely: 0,
    })
    .onConflict((oc) => oc.column('machine_id').doNothing())
    .execute();
}

async function addToDay(
  tx: Tx,
  key: { day: string; machine_id: string; currency: string },
  add: Record<string, number>,
): Promise<void> {
  const row = {
    ...key,
    paid_count: 0,
    paid_milli: 0,
    cash_count: 0,
    cash_milli: 0,
    cancelled_count: 0,
    dead_count: 0,
    dead_milli: 0,
    ...add,
  };
  await tx
    .insertInto('daily_totals')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['day', 'machine_id', 'currency']).doUpdateSet((eb) => {
        const set: Record<string, unknown> = {};
        for (const column of Object.keys(add)) {
          set[column] = sql`daily_totals.${sql.ref(column)} + ${eb.ref(`excluded.${column}` as 'excluded.paid_count')}`;
        }
        return set;
      }),
    )
    .execute();
}

async function noteLastSale(tx: Tx, machineId: string, at: string): Promise<void> {
  await tx
    .updateTable('machines')
    .set({ last_sale_at: at })
    .where('machine_id', '=', machineId)
    .where((eb) => eb.or([eb('last_sale_at', 'is', null), eb('last_sale_at', '<', at)]))
    .execute();
}

async function storeSale(tx: Tx, machineId: string, e: SaleEvent, day: string): Promise<void> {
  const milli = toMilli(e.amount) ?? 0;
  await tx
    .insertInto('sales')
    .values({
      machine_id: machineId,
      event_id: e.eventId,
      kind: 'qr',
      day,
      at: e.at,
      tx_id: e.txId,
      flow: e.flow,
      amount: e.amount,
      amount_milli: milli,
      currency: e.currency,
      closing: e.closing,
      verdict: e.verdict,
      item: e.products[0]?.item ?? null,
    })
    .execute();
  const key = { day, machine_id: machineId, currency: e.currency };
  if (e.verdict === 'dead-letter') await addToDay(tx, key, { dead_count: 1, dead_milli: milli });
  else if (e.closing === 'settlement') await addToDay(tx, key, { paid_count: 1, paid_milli: milli });
  else await addToDay(tx, key, { cancelled_count: 1 });
  if (e.closing === 'settlement') await noteLastSale(tx, machineId, e.at);
}

async function storeCashSale(tx: Tx, machineId: string, e: CashSaleEvent, day: string): Promise<void> {
  const milli = toMilli(e.price) ?? 0;
  await tx
    .insertInto('sales')
    .values({
      machine_id: machineId,
      event_id: e.eventId,
      kind: 'cash',
      day,
      at: e.at,
      tx_id: null,
      flow: null,
      amount: e.price,
      amount_milli: milli,
      currency: e.currency,
      closing: null,
      verdict: null,
      item: e.item,
    })
    .execute();
  await addToDay(tx, { day, machine_id: machineId, currency: e.currency }, { cash_count: 1, cash_milli: milli });
  await noteLastSale(tx, machineId, e.at);
}

async function storeAlarm(tx: Tx, machineId: string, e: AlarmEvent): Promise<void> {
  const open = await tx
    .selectFrom('alarms')
    .select('id')
    .where('machine_id', '=', machineId)
    .where('code', '=', e.code)
    .where('cleared_at', 'is', null)
    .executeTakeFirst();
  if (e.state === 'raised') {
    if (open !== undefined) return;
    await tx
      .insertInto('alarms')
      .values({ machine_id: machineId, code: e.code, raised_at: e.at, raised_detail: e.detail })
      .execute();
  } else if (open !== undefined) {
    await tx
      .updateTable('alarms')
      .set({ cleared_at: e.at, cleared_detail: e.detail })
      .where('id', '=', open.id)
      .execute();
  }
}

interface AuditVerdict {
  verdict: string;
  difference: number | null;
  message: string | null;
  checkOk: number | null;
}

/** Reads the machine's own reconciliation (src/dex: match, mismatch or skipped) off the summary. */
export function auditVerdict(summary: Record<string, unknown>): AuditVerdict {
  const check = summary.check as { ok?: unknown } | undefined;
  const checkOk = typeof check?.ok === 'boolean' ? Number(check.ok) : null;
  const r = summary.reconciliation as
    { status?: unknown; difference?: unknown; message?: unknown; reason?: unknown } | undefined;
  const status =
    typeof r?.status === 'string' && ['match', 'mismatch', 'skipped'].includes(r.status) ? r.status : 'unknown';
  const difference = typeof r?.difference === 'number' && Number.isSafeInteger(r.difference) ? r.difference : null;
  const text = typeof r?.message === 'string' ? r.message : typeof r?.reason === 'string' ? r.reason : null;
  return { verdict: status, difference, message: text === null ? null : text.slice(0, 512), checkOk };
}

async function storeAudit(tx: Tx, machineId: string, e: AuditEvent): Promise<void> {
  if (e.part !== 0 || e.summary === null) return;
  const v = auditVerdict(e.summary);
  await tx
    .insertInto('audits')
    .values({
      machine_id: machineId,
      audit_id: e.auditId,
      event_id: e.eventId,
      at: e.at,
      check_ok: v.checkOk,
      verdict: v.verdict,
      difference: v.difference,
      message: v.message,
      summary: JSON.stringify(e.summary),
    })
    .onConflict((oc) => oc.columns(['machine_id', 'audit_id']).doNothing())
    .execute();
}

async function storeUpdate(tx: Tx, machineId: string, e: UpdateEvent): Promise<void> {
  await tx
    .insertInto('updates')
    .values({
      machine_id: machineId,
      event_id: e.eventId,
      at: e.at,
      version: e.version,
      running: e.running,
      state: e.state,
      rollout_id: e.rolloutId,
      detail: e.detail,
    })
    .execute();
}

/**
 * Stores one event that passed the contract (the topic's machineId already checked against it).
 * Returns false when it was stored before (a redelivery).
 */
export async function storeEvent(
  db: Db,
  machineId: string,
  event: FleetEvent,
  receivedAt: string,
  raw: string,
): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const inserted = await tx
      .insertInto('events')
      .values({
        machine_id: machineId,
        event_id: event.eventId,
        kind: event.kind,
        at: event.at,
        received_at: receivedAt,
        payload: raw,
      })
      .onConflict((oc) => oc.columns(['machine_id', 'event_id']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return false;
    await ensureMachine(tx, machineId, receivedAt);
    const day = dayOf(event.at, receivedAt);
    if (event.kind === 'sale') await storeSale(tx, machineId, event, day);
    else if (event.kind === 'cash-sale') await storeCashSale(tx, machineId, event, day);
    else if (event.kind === 'alarm') await storeAlarm(tx, machineId, event);
    else if (event.kind === 'audit') await storeAudit(tx, machineId, event);
    else await storeUpdate(tx, machineId, event);
    return true;
  });
}

const NO_STATUS = { reader: null, gateway: null, outbox_pending: 0, outbox_dead: 0, version: null, alarms: '' };

/** The retained status (or last will), the topic's machine; a history row when something changed. */
export async function storeStatus(db: Db, machineId: string, status: StatusMessage, receivedAt: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const before = await tx.selectFrom('machines').selectAll().where('machine_id', '=', machineId).executeTakeFirst();
    const base = before ?? { ...NO_STATUS, online: 0 };
    const next = status.online
      ? {
          online: 1,
          terminal_id: status.terminalId,
          version: status.version,
          reader: status.reader,
          disabled_remotely: Number(status.readerDisabledRemotely),
          gateway: status.gateway,
          outbox_pending: status.outbox.pending,
          outbox_dead: status.outbox.dead,
          alarms: status.alarms.join(','),
          update_state: status.update?.state ?? null,
          update_version: status.update?.version ?? null,
          status_at: status.at,
        }
      : { online: 0 };
    if (before === undefined) {
      await tx
        .insertInto('machines')
        .values({ machine_id: machineId, ...NO_STATUS, disabled_remotely: 0, seen_at: receivedAt, ...next })
        .execute();
    } else {
      await tx
        .updateTable('machines')
        .set({ ...next, seen_at: receivedAt })
        .where('machine_id', '=', machineId)
        .execute();
    }
    const merged = { ...base, ...next };
    const changed =
      before === undefined ||
      (['online', 'reader', 'gateway', 'outbox_pending', 'outbox_dead', 'version', 'alarms'] as const).some(
        (k) => before[k] !== merged[k],
      );
    if (!changed) return;
    await tx
      .insertInto('status_history')
      .values({
        machine_id: machineId,
        received_at: receivedAt,
        online: merged.online,
        reader: merged.reader,
        gateway: merged.gateway,
        outbox_pending: merged.outbox_pending,
        outbox_dead: merged.outbox_dead,
        version: merged.version,
        alarms: merged.alarms,
      })
      .execute();
  });
}

/** Health figures as they are, bounded; only the last is kept. */
export async function storeHealth(
  db: Db,
  machineId: string,
  stats: Record<string, unknown>,
  receivedAt: string,
): Promise<void> {
  let text = JSON.stringify(stats);
  if (text.length > 8192) text = JSON.stringify({ omitted: 'health figures larger than 8 KiB' });
  await db
    .updateTable('machines')
    .set({ health_at: receivedAt, health: text })
    .where('machine_id', '=', machineId)
    .execute();
}

/** Counts a refused message per machine and reason; the last detail is kept for the technician. */
export async function countRefusal(
  db: Db,
  machineId: string | null,
  reason: string,
  detail: string,
  at: string,
): Promise<void> {
  const row = { machine_id: machineId ?? '', reason, count: 1, last_at: at, last_detail: detail.slice(0, 256) };
  await db
    .insertInto('refusals')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['machine_id', 'reason']).doUpdateSet((eb) => ({
        count: sql`refusals.count + 1`,
        last_at: eb.ref('excluded.last_at'),
        last_detail: eb.ref('excluded.last_detail'),
      })),
    )
    .execute();
}
