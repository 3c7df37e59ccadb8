/**
 * What a notification says (docs/console.md "E-mail"): which machine, what, since when (on the
 * wall clock of the rule's zone), the detail, what to do, and the link to the page that shows it;
 * as plain text for e-mail and as a Standard Webhooks body for an endpoint.
 */
import type { Rule } from '../store/alert-queries.js';
import { formatInstant } from '../web/time-format.js';
import { CONDITIONS, type ConditionKind, type Holding } from './conditions.js';
import type { Say } from './rule-step.js';

/** An instant as the pages show it (to the second, in the rule's zone: web/time-format.ts). */
const wallClock = (ms: number, zone: string) => formatInstant(ms, zone).shown;

export interface Notice {
  rule: Rule;
  machineId: string;
  say: Exclude<Say, null>;
  holding: Holding;
  now: number;
  /** The console's address as the operator reaches it (links), or null: the path alone. */
  publicUrl: string | null;
}

function what(rule: Rule): string {
  const kind = rule.condition as ConditionKind;
  if (kind === 'alarm') return rule.alarm_code === '' ? 'an alarm is raised' : `alarm ${rule.alarm_code} is raised`;
  if (kind === 'offline') return `offline longer than ${rule.threshold_minutes} minutes`;
  if (kind === 'no-sale') return `no sale for ${rule.threshold_minutes} minutes of the rule's hours`;
  return CONDITIONS[kind]?.label ?? rule.condition;
}

const VERB = { raised: 'ALERT', repeated: 'STILL', cleared: 'CLEARED' } as const;

export function linkOf(n: Pick<Notice, 'holding' | 'publicUrl'>): string {
  return `${n.publicUrl ?? ''}${n.holding.page}`;
}

export function emailOf(n: Notice): { subject: string; text: string } {
  const subject = `[qrvend] ${VERB[n.say]} ${n.machineId}: ${what(n.rule)}`.slice(0, 200);
  const lines = [
    `Machine: ${n.machineId}`,
    `What: ${what(n.rule)}${n.say === 'cleared' ? ' - no longer holds' : ''}`,
    `Since: ${wallClock(n.holding.since, n.rule.time_zone)}`,
    `Detail: ${n.holding.detail}`,
    n.say === 'cleared' ? `Cleared: ${wallClock(n.now, n.rule.time_zone)}` : `What to do: ${n.holding.advice}`,
    '',
    `See: ${linkOf(n)}`,
    '',
    `Rule "${n.rule.name}" of ${n.rule.owner}; change or stop it on the console's Alerts page.`,
  ];
  return { subject, text: lines.join('\n') };
}

export function webhookBodyOf(n: Notice): string {
  return JSON.stringify({
    type: `alert.${n.say}`,
    timestamp: new Date(n.now).toISOString(),
    data: {
      ruleId: n.rule.id,
      rule: n.rule.name,
      owner: n.rule.owner,
      condition: n.rule.condition,
      alarmCode: n.rule.alarm_code === '' ? null : n.rule.alarm_code,
      machineId: n.machineId,
      since: new Date(n.holding.since).toISOString(),
      detail: n.holding.detail,
      advice: n.holding.advice,
      url: linkOf(n),
    },
  });
}
