/**
 * One event's own rows, written inside the caller's transaction: the checks an event passes
 * before it is stored, and the alarm, audit and update rows, which depend on the order of events
 * and so are written one event at a time (sales are written a batch at a time: ./event-batch.ts).
 */
import type { Transaction } from 'kysely';
import type { AlarmEvent, AuditEvent, FleetEvent, UpdateEvent } from '../../fleet/contract/index.js';
import type { ConsoleDatabase } from './schema.js';

type Tx = Transaction<ConsoleDatabase>;

/** What one event needs to be stored: the topic's machine (already checked), the event, its raw text. */
export interface IncomingEvent {
  machineId: string;
  event: FleetEvent;
  receivedAt: string;
  raw: string;
}

/**
 * Decimal text with at most 3 decimals (every ISO 4217 currency) -> integer thousandths; null if
 * not one. A BigInt: sums of them are exact at any size (a Number is exact only to 2^53
 * thousandths, about 9 x 10^12 units, which eleven sales of 999999999999.999 pass).
 */
export function toMilli(amount: string): bigint | null {
  const m = /^(\d{1,12})(?:\.(\d{1,3}))?$/.exec(amount);
  if (m === null) return null;
  return BigInt(m[1]!) * 1000n + BigInt((m[2] ?? '').padEnd(3, '0'));
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

export async function storeAlarm(tx: Tx, machineId: string, e: AlarmEvent): Promise<void> {
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

export async function storeAudit(tx: Tx, machineId: string, e: AuditEvent): Promise<void> {
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

export async function storeUpdate(tx: Tx, machineId: string, e: UpdateEvent): Promise<void> {
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
