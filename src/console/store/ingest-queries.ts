/**
 * What ingest writes: each event in one transaction with everything derived from it (the sale
 * and its day's totals, the alarm's open/cleared row, the audit's verdict, the update's state),
 * so an event is either wholly stored or not at all (several events share one transaction:
 * ./event-batch.ts). The (machine, eventId) key makes a redelivered event a no-op: the totals
 * count it once. Statuses, health and refusals are written here.
 */
import { sql, type Kysely } from 'kysely';
import type { FleetEvent, StatusMessage } from '../../fleet/contract/index.js';
import { storeEventBatch } from './event-batch.js';
import type { ConsoleDatabase } from './schema.js';
import { storableText } from './storable-text.js';

export { auditVerdict, dayOf, eventProblem, toMilli, type IncomingEvent } from './event-rows.js';

type Db = Kysely<ConsoleDatabase>;

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
  const [stored] = await storeEventBatch(db, [{ machineId, event, receivedAt, raw }]);
  return stored === true;
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
          // What runs, waits and was refused of the catalog document (catalog-queries.ts reads it).
          catalog_status: status.catalog === undefined ? null : JSON.stringify(status.catalog),
        }
      : { online: 0 };
    // When the machine went on- or offline: "offline longer than N minutes" counts from it.
    const since = before === undefined || before.online !== next.online ? { online_since: receivedAt } : {};
    if (before === undefined) {
      await tx
        .insertInto('machines')
        .values({ machine_id: machineId, ...NO_STATUS, disabled_remotely: 0, seen_at: receivedAt, ...next, ...since })
        .execute();
    } else {
      await tx
        .updateTable('machines')
        .set({ ...next, ...since, seen_at: receivedAt })
        .where('machine_id', '=', machineId)
        .execute();
    }
    const refused = status.online ? status.catalog?.refused : null;
    if (refused != null && refused.version !== null)
      await tx
        .updateTable('catalog_pushes')
        .set({ refused_reason: refused.reason, refused_message: refused.message, refused_at: refused.at })
        .where('machine_id', '=', machineId)
        .where('version', '=', refused.version)
        .where('refused_reason', 'is', null)
        .execute();
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

/**
 * Counts a refused message per machine and reason; the last detail is kept for the technician,
 * escaped (./storable-text.ts): the refusal of an unstorable message must itself be storable.
 */
export async function countRefusal(
  db: Db,
  machineId: string | null,
  reason: string,
  detail: string,
  at: string,
): Promise<void> {
  const row = {
    machine_id: machineId ?? '',
    reason,
    count: 1,
    last_at: at,
    last_detail: storableText(detail.slice(0, 256)),
  };
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
