/**
 * The alert evaluator (docs/console.md "Alert rules"): every `everyMs`, the instance holding the
 * `alerts` lease looks at every enabled rule, asks where its machines stand (./conditions.ts),
 * moves each machine's state (./rule-step.ts) and, in the same transaction as the new state,
 * queues what is to be said: an e-mail to the owner's address and a webhook to the rule's
 * endpoint. The deliveries go out through the queue (../deliveries/worker.ts), from whichever
 * instance claims them. Times come from `clock` (injected in tests).
 */
import type { Kysely } from 'kysely';
import type { Logger } from '../../core/log.js';
import { enqueue } from '../store/delivery-queue.js';
import { dropState, emailOf, enabledRules, putState, statesOf, takeLease, type Rule } from '../store/alert-queries.js';
import type { AlertStatesTable } from '../store/reach-schema.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { findEndpoint } from '../store/webhook-queries.js';
import { newMessageId } from '../deliveries/signing.js';
import { inHours } from './business-hours.js';
import { holdingNow, hoursOf, type Holding } from './conditions.js';
import { emailOf as emailText, webhookBodyOf, type Notice } from './message.js';
import { alertStep, type AlertState } from './rule-step.js';

export interface EvaluatorOptions {
  db: Kysely<ConsoleDatabase>;
  instance: string;
  log: Logger;
  clock?: () => number;
  everyMs: number;
  publicUrl: string | null;
  /** Called when something was queued (the worker looks at the queue at once). */
  queued?: () => void;
}

const iso = (ms: number) => new Date(ms).toISOString();
const msOf = (text: string | null) => (text === null ? 0 : Date.parse(text));

function stateOf(row: AlertStatesTable | undefined): AlertState {
  if (row === undefined) return { tag: 'quiet' };
  const base = { since: msOf(row.since), detail: row.detail, firstSeen: msOf(row.first_seen_at) };
  if (row.told_at === null) return { tag: 'holding', ...base };
  const told = { ...base, told: msOf(row.told_at), lastSent: msOf(row.last_sent_at), sent: row.sent_count };
  return row.cleared_at === null ? { tag: 'told', ...told } : { tag: 'clearing', ...told };
}

function rowOf(
  ruleId: number,
  machineId: string,
  s: Exclude<AlertState, { tag: 'quiet' }>,
  now: number,
): AlertStatesTable {
  const told = s.tag === 'told' || s.tag === 'clearing' ? s : null;
  return {
    rule_id: ruleId,
    machine_id: machineId,
    since: iso(s.since),
    detail: s.detail.slice(0, 1000),
    first_seen_at: iso(s.firstSeen),
    told_at: told === null ? null : iso(told.told),
    last_sent_at: told === null ? null : iso(told.lastSent),
    sent_count: told?.sent ?? 0,
    cleared_at: s.tag === 'clearing' ? iso(now) : null,
  };
}

export class AlertEvaluator {
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  readonly counters = { rounds: 0, notices: 0 };

  constructor(private readonly o: EvaluatorOptions) {
    this.clock = o.clock ?? Date.now;
  }

  start(): void {
    const tick = () => {
      this.running = this.runOnce()
        .then(() => undefined)
        .catch((err: unknown) => this.o.log.warn({ err: (err as Error).message }, 'alerts: a round failed'))
        .finally(() => {
          if (this.timer !== null) this.timer = setTimeout(tick, this.o.everyMs).unref();
        });
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  async close(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One round, if this instance holds the lease; returns the notices queued (null: another instance evaluates). */
  async runOnce(): Promise<number | null> {
    const now = this.clock();
    if (!(await takeLease(this.o.db, 'alerts', this.o.instance, now, this.o.everyMs * 3))) return null;
    let notices = 0;
    for (const rule of await enabledRules(this.o.db)) notices += await this.evaluate(rule, now);
    this.counters.rounds++;
    this.counters.notices += notices;
    if (notices > 0) this.o.queued?.();
    return notices;
  }

  private async evaluate(rule: Rule, now: number): Promise<number> {
    const holding = await holdingNow(this.o.db, rule, now);
    const states = new Map((await statesOf(this.o.db, rule.id)).map((s) => [s.machine_id, s]));
    const open = inHours(now, hoursOf(rule));
    const timing = {
      holdMs: rule.hold_minutes * 60_000,
      repeatMs: rule.repeat_minutes * 60_000,
      sayCleared: rule.notify_cleared === 1,
    };
    let said = 0;
    for (const machineId of new Set([...holding.keys(), ...states.keys()])) {
      const h = holding.get(machineId) ?? null;
      const before = stateOf(states.get(machineId));
      const { next, say } = alertStep(before, { holds: h, now, inHours: open }, timing);
      if (next.tag === 'quiet' && before.tag === 'quiet') continue;
      const shown: Holding = h ?? {
        since: before.tag === 'quiet' ? now : before.since,
        detail: before.tag === 'quiet' ? '' : before.detail,
        page: `/machines/${encodeURIComponent(machineId)}`,
        advice: '',
      };
      await this.o.db.transaction().execute(async (tx) => {
        if (next.tag === 'quiet') await dropState(tx, rule.id, machineId);
        else await putState(tx, rowOf(rule.id, machineId, next, now));
        if (say === null) return;
        const notice: Notice = { rule, machineId, say, holding: shown, now, publicUrl: this.o.publicUrl };
        const common = { kind: 'alert', owner: rule.owner, rule_id: rule.id, machine_id: machineId };
        const address = rule.email === 1 ? await emailOf(tx, rule.owner) : null;
        if (address !== null) {
          const payload = JSON.stringify(emailText(notice));
          await enqueue(tx, { ...common, id: newMessageId(), channel: 'email', recipient: address, payload }, now);
        }
        const endpoint = rule.endpoint_id === null ? null : await findEndpoint(tx, rule.endpoint_id);
        if (endpoint !== null && endpoint.alerts === 1) {
          const payload = webhookBodyOf(notice);
          await enqueue(
            tx,
            { ...common, id: newMessageId(), channel: 'webhook', endpoint_id: endpoint.id, payload },
            now,
          );
        }
      });
      if (say !== null) said++;
    }
    return said;
  }
}
