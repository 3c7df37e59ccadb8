/**
 * An alert rule as the Alerts page's form gives it (docs/console.md "Alert rules"): every field
 * checked, each refusal naming the field, before anything is stored.
 */
import { ALARM_CODES } from '../../fleet/contract/index.js';
import type { RuleFields } from '../store/alert-queries.js';
import { isTimeZone } from '../time-zone.js';
import { CONDITION_KINDS } from './conditions.js';

export type RuleForm = Partial<Record<string, string>>;

export class RuleFormError extends Error {}

const refuse = (field: string, why: string) => new RuleFormError(`${field}: ${why}`);

function minutesOf(field: string, value: string | undefined, max: number): number {
  const n = Number(value ?? '0');
  if (!Number.isSafeInteger(n) || n < 0 || n > max) throw refuse(field, `whole minutes from 0 to ${max}`);
  return n;
}

/** "HH:MM" -> minutes of the day; "24:00" is the day's end. */
function clockOf(field: string, value: string | undefined): number {
  const m = /^(\d{1,2}):(\d{2})$/.exec(value ?? '');
  const minutes = m === null ? NaN : Number(m[1]) * 60 + Number(m[2]);
  if (m === null || Number(m[2]) > 59 || minutes > 1440) throw refuse(field, 'a time of day HH:MM (00:00 to 24:00)');
  return minutes;
}

const MACHINE_LIST = /^[^,\s][^,]{0,127}(,[^,]{1,128}){0,499}$/;

export function ruleFields(form: RuleForm, endpoints: number[]): RuleFields {
  const name = (form.name ?? '').trim();
  if (name === '' || name.length > 100) throw refuse('name', '1 to 100 characters');
  const condition = form.condition ?? '';
  if (!(CONDITION_KINDS as readonly string[]).includes(condition))
    throw refuse('condition', 'not one the console knows');
  const alarmCode = condition === 'alarm' ? (form.alarm_code ?? '') : '';
  if (alarmCode !== '' && !(ALARM_CODES as readonly string[]).includes(alarmCode))
    throw refuse('alarm code', 'unknown');
  const machines = (form.machines ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '')
    .join(',');
  if (machines !== '' && !MACHINE_LIST.test(machines)) throw refuse('machines', 'machine ids separated by commas');
  const days = [1, 2, 3, 4, 5, 6, 7].filter((d) => form[`day${d}`] === 'on');
  if (days.length === 0) throw refuse('days', 'at least one day');
  const from = clockOf('from', form.from);
  const to = clockOf('to', form.to);
  if (to <= from) throw refuse('to', 'after from (a span of one day; make two rules for a night)');
  const zone = (form.time_zone ?? '').trim();
  if (!isTimeZone(zone)) throw refuse('time zone', 'an IANA time zone such as Europe/Berlin or UTC');
  const endpoint = form.endpoint === undefined || form.endpoint === '' ? null : Number(form.endpoint);
  if (endpoint !== null && !endpoints.includes(endpoint)) throw refuse('webhook', 'not an endpoint that takes alerts');
  return {
    name,
    condition,
    alarm_code: alarmCode,
    threshold_minutes: minutesOf('threshold', form.threshold_minutes, 525_600),
    machines,
    route_id: (form.route_id ?? '').trim().slice(0, 64),
    days: days.join(','),
    from_minute: from,
    to_minute: to,
    time_zone: zone,
    hold_minutes: minutesOf('hold', form.hold_minutes, 10_080),
    repeat_minutes: minutesOf('repeat', form.repeat_minutes, 10_080),
    notify_cleared: Number(form.notify_cleared === 'on'),
    email: Number(form.email === 'on'),
    endpoint_id: endpoint,
    enabled: Number(form.enabled === 'on'),
  };
}

export const RULE_FORM_FIELDS = [
  'csrf',
  'owner',
  'name',
  'condition',
  'alarm_code',
  'threshold_minutes',
  'machines',
  'route_id',
  'day1',
  'day2',
  'day3',
  'day4',
  'day5',
  'day6',
  'day7',
  'from',
  'to',
  'time_zone',
  'hold_minutes',
  'repeat_minutes',
  'notify_cleared',
  'email',
  'endpoint',
  'enabled',
] as const;
