/**
 * Alert rules, what each knows of its machines, and the lease that lets one console instance
 * evaluate them at a time (docs/console.md "Alert rules").
 */
import { type Kysely, type Transaction } from 'kysely';
import type { ConsoleDatabase } from './schema.js';
import type { AlertRulesTable, AlertStatesTable } from './reach-schema.js';

type Db = Kysely<ConsoleDatabase>;
type Tx = Transaction<ConsoleDatabase>;

export type RuleFields = Omit<AlertRulesTable, 'id' | 'owner' | 'created_at' | 'updated_at'>;
export type Rule = Omit<AlertRulesTable, 'id' | 'endpoint_id'> & { id: number; endpoint_id: number | null };

function ruleOf(r: Rule): Rule {
  return { ...r, id: Number(r.id), endpoint_id: r.endpoint_id === null ? null : Number(r.endpoint_id) };
}

export async function addRule(db: Db, owner: string, fields: RuleFields, nowIso: string): Promise<number> {
  const row = await db
    .insertInto('alert_rules')
    .values({ ...fields, owner, created_at: nowIso, updated_at: nowIso })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** Changes a rule; what the rule knew of its machines starts over (its condition or scope may differ). */
export async function updateRule(db: Db, id: number, fields: RuleFields, nowIso: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx
      .updateTable('alert_rules')
      .set({ ...fields, updated_at: nowIso })
      .where('id', '=', id)
      .execute();
    await tx.deleteFrom('alert_states').where('rule_id', '=', id).execute();
  });
}

export async function deleteRule(db: Db, id: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('alert_states').where('rule_id', '=', id).execute();
    await tx.deleteFrom('alert_rules').where('id', '=', id).execute();
  });
}

export async function findRule(db: Db, id: number): Promise<Rule | null> {
  const r = await db.selectFrom('alert_rules').selectAll().where('id', '=', id).executeTakeFirst();
  return r === undefined ? null : ruleOf(r);
}

/** One owner's rules, or everyone's (owner null). */
export async function listRules(db: Db, owner: string | null): Promise<Rule[]> {
  let q = db.selectFrom('alert_rules').selectAll();
  if (owner !== null) q = q.where('owner', '=', owner);
  return (await q.orderBy('owner').orderBy('id').execute()).map(ruleOf);
}

export async function enabledRules(db: Db): Promise<Rule[]> {
  return (await db.selectFrom('alert_rules').selectAll().where('enabled', '=', 1).orderBy('id').execute()).map(ruleOf);
}

export async function statesOf(db: Db, ruleId: number): Promise<AlertStatesTable[]> {
  return db.selectFrom('alert_states').selectAll().where('rule_id', '=', ruleId).execute();
}

export async function putState(tx: Tx, s: AlertStatesTable): Promise<void> {
  await tx
    .insertInto('alert_states')
    .values(s)
    .onConflict((oc) =>
      oc.columns(['rule_id', 'machine_id']).doUpdateSet({
        since: s.since,
        detail: s.detail,
        first_seen_at: s.first_seen_at,
        told_at: s.told_at,
        last_sent_at: s.last_sent_at,
        sent_count: s.sent_count,
        cleared_at: s.cleared_at,
      }),
    )
    .execute();
}

export async function dropState(tx: Tx, ruleId: number, machineId: string): Promise<void> {
  await tx.deleteFrom('alert_states').where('rule_id', '=', ruleId).where('machine_id', '=', machineId).execute();
}

/**
 * Takes (or keeps) the lease `name` for `holder` until `nowMs + ttlMs`: true when it is ours. One
 * statement each, so two instances asking at once cannot both get it.
 */
export async function takeLease(db: Db, name: string, holder: string, nowMs: number, ttlMs: number): Promise<boolean> {
  await db
    .insertInto('leases')
    .values({ name, holder: '', until_ms: 0 })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const r = await db
    .updateTable('leases')
    .set({ holder, until_ms: nowMs + ttlMs })
    .where('name', '=', name)
    .where((eb) => eb.or([eb('holder', '=', holder), eb('until_ms', '<', nowMs)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Accounts' e-mail addresses (null: the account wants none). */
export async function emailOf(db: Db | Tx, name: string): Promise<string | null> {
  const row = await db.selectFrom('users').select('email').where('name', '=', name).executeTakeFirst();
  return row?.email ?? null;
}

export async function setEmail(db: Db, name: string, email: string | null): Promise<void> {
  await db.updateTable('users').set({ email }).where('name', '=', name).execute();
}

/** The last notifications queued for an owner (e-mail and webhooks), newest first. */
export async function notificationsOf(db: Db, owner: string, limit = 30) {
  return db
    .selectFrom('deliveries')
    .select([
      'id',
      'channel',
      'kind',
      'machine_id',
      'rule_id',
      'state',
      'attempts',
      'created_ms',
      'payload',
      'last_error',
    ])
    .where('owner', '=', owner)
    .where('kind', 'in', ['alert', 'notice'])
    .orderBy('created_ms', 'desc')
    .limit(limit)
    .execute();
}
