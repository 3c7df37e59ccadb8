/**
 * A rule's hours (docs/console.md "Alert rules"): weekdays and a span of the day in an IANA time
 * zone, with luxon for the wall clock of that zone, so a day of 23 or 25 hours (a change to or
 * from summer time) is a day of its own hours: 08:00-18:00 is ten hours of the local clock on
 * either side of the change. A time that does not exist (02:30 on the night the clocks go
 * forward) is moved on by the hour that is missing (03:30), as JavaScript's Temporal does.
 */
import { DateTime } from 'luxon';

export interface Hours {
  /** ISO weekdays, 1 = Monday ... 7 = Sunday. */
  days: readonly number[];
  /** Minutes of the local day, [from, to): 0 <= from < to <= 1440. */
  fromMinute: number;
  toMinute: number;
  zone: string;
}

const at = (day: DateTime, minute: number) =>
  minute >= 1440
    ? day.plus({ days: 1 }).startOf('day')
    : day.set({ hour: Math.floor(minute / 60), minute: minute % 60, second: 0, millisecond: 0 });

/** Whether the instant `ms` is inside the hours. */
export function inHours(ms: number, hours: Hours): boolean {
  const local = DateTime.fromMillis(ms, { zone: hours.zone });
  if (!hours.days.includes(local.weekday)) return false;
  const day = local.startOf('day');
  return ms >= at(day, hours.fromMinute).toMillis() && ms < at(day, hours.toMinute).toMillis();
}

/** How many milliseconds of the hours lie between `fromMs` and `toMs` (at most 400 days are looked at). */
export function msInHours(fromMs: number, toMs: number, hours: Hours): number {
  if (toMs <= fromMs) return 0;
  let day = DateTime.fromMillis(fromMs, { zone: hours.zone }).startOf('day');
  const last = DateTime.fromMillis(toMs, { zone: hours.zone }).startOf('day');
  let total = 0;
  for (let i = 0; i < 400 && day <= last; i++, day = day.plus({ days: 1 })) {
    if (!hours.days.includes(day.weekday)) continue;
    const open = Math.max(fromMs, at(day, hours.fromMinute).toMillis());
    const close = Math.min(toMs, at(day, hours.toMinute).toMillis());
    if (close > open) total += close - open;
  }
  return total;
}
