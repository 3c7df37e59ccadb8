/**
 * A rule's hours across the changes of summer time in Europe/Berlin (2026-03-29 02:00 -> 03:00,
 * 2026-10-25 03:00 -> 02:00): the local clock's hours, whatever the day's length.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inHours, msInHours, type Hours } from '../../../src/console/alerts/business-hours.js';

const H = 3_600_000;
const weekdays: Hours = { days: [1, 2, 3, 4, 5], fromMinute: 8 * 60, toMinute: 18 * 60, zone: 'Europe/Berlin' };
const everyDay: Hours = { ...weekdays, days: [1, 2, 3, 4, 5, 6, 7] };
const t = (iso: string) => Date.parse(iso);

test('08:00 local is 07:00 UTC in winter and 06:00 UTC in summer', () => {
  assert.equal(inHours(t('2026-03-27T06:59:59Z'), weekdays), false);
  assert.equal(inHours(t('2026-03-27T07:00:00Z'), weekdays), true);
  assert.equal(inHours(t('2026-03-30T05:59:59Z'), weekdays), false);
  assert.equal(inHours(t('2026-03-30T06:00:00Z'), weekdays), true);
  assert.equal(inHours(t('2026-03-30T15:59:59Z'), weekdays), true);
  assert.equal(inHours(t('2026-03-30T16:00:00Z'), weekdays), false);
  // A Sunday is not a weekday.
  assert.equal(inHours(t('2026-03-29T10:00:00Z'), weekdays), false);
});

test('business time over the weekend the clocks go forward', () => {
  // Friday 17:00 CET to Monday 09:00 CEST: one hour on Friday, one on Monday.
  assert.equal(msInHours(t('2026-03-27T16:00:00Z'), t('2026-03-30T07:00:00Z'), weekdays), 2 * H);
  // Every day: Saturday and the 23-hour Sunday have ten hours each of 08:00-18:00.
  assert.equal(msInHours(t('2026-03-27T16:00:00Z'), t('2026-03-30T07:00:00Z'), everyDay), 22 * H);
});

test('a span across the missing and the doubled hour is the local clock', () => {
  const night: Hours = { days: [1, 2, 3, 4, 5, 6, 7], fromMinute: 60, toMinute: 4 * 60, zone: 'Europe/Berlin' };
  // 01:00-04:00 on the day 02:00-03:00 does not exist: two hours pass.
  assert.equal(msInHours(t('2026-03-28T12:00:00Z'), t('2026-03-29T12:00:00Z'), night), 2 * H);
  // On the day 02:00-03:00 comes twice: four hours pass.
  assert.equal(msInHours(t('2026-10-24T12:00:00Z'), t('2026-10-25T12:00:00Z'), night), 4 * H);
  // 02:30 on the night it does not exist: the hours from 02:30 start at 03:30 CEST (01:30 UTC).
  const late: Hours = { ...night, fromMinute: 150 };
  assert.equal(inHours(t('2026-03-29T01:29:59Z'), late), false);
  assert.equal(inHours(t('2026-03-29T01:30:00Z'), late), true);
});
