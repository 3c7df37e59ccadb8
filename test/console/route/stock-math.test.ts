/**
 * Stock, visits and pick lists (src/console/route/stock-math.ts) against tables computed by hand
 * (each row says how), DEX counts that disagree with our own sales included.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DAY_MS,
  auditCorrection,
  daysToEmpty,
  fillProblem,
  nextVisitAfter,
  pickList,
  predictedLevel,
  salesRatePerDay,
  selectionNeedsVisit,
  toBring,
  type SelectionState,
} from '../../../src/console/route/stock-math.js';

const H = 3600_000;
const MON = Date.UTC(2026, 10, 30); // Monday 30 November 2026, 00:00 UTC

test('the audit corrects by what it counted beyond our own events', () => {
  // Interval: Monday 00:00 to Tuesday 00:00 (24 h).
  const interval = { fromMs: MON, toMs: MON + 24 * H };
  const rows: [number, number, number | null, number, string][] = [
    // dex, ours, fill,        correction, how
    [10, 7, null, 3, '3 vends by coins we never saw: 10 - 7'],
    [10, 7, MON - H, 3, 'filled before the interval: all of it'],
    [6, 8, null, -2, 'the VMC counted 2 fewer than we did: the level goes back up by 2'],
    [10, 2, MON + 6 * H, 6, '8 unseen, filled after a quarter: 8 x 18/24 = 6'],
    [10, 2, MON + 20 * H, 1, '8 unseen, 4 h of 24 left: 8 x 4/24 = 1.33 -> 1'],
    [10, 2, MON + 25 * H, 0, 'filled after the read: nothing'],
    [5, 5, null, 0, 'they agree'],
  ];
  for (const [dex, ours, fill, expected, how] of rows)
    assert.equal(auditCorrection(interval, dex, ours, fill), expected, how);
});

test('the sales rate: this cycle and the one before, over at least a day', () => {
  const now = MON + 2 * DAY_MS;
  const rows: [number, number, number, number, number, string][] = [
    // previousVends, previousMs, currentVends, sinceMs, vends/day, how
    [0, 0, 6, MON, 3, '6 vends in 2 days'],
    [14, 7 * DAY_MS, 4, MON, 2, '(14 + 4) over 7 + 2 days = 2'],
    [0, 0, 5, now - H, 5, 'an hour of a fresh cycle counts as a day: 5'],
    [0, 0, 0, MON, 0, 'nothing sold'],
  ];
  for (const [pv, pms, cv, since, rate, how] of rows) {
    assert.equal(
      salesRatePerDay({ previousVends: pv, previousMs: pms, currentVends: cv, sinceMs: since }, now),
      rate,
      how,
    );
  }
});

test('predicted levels, days to empty, needs a visit', () => {
  assert.equal(predictedLevel(10, 2, MON, MON + 3 * DAY_MS), 4, '10 - 2 x 3');
  assert.equal(predictedLevel(3, 2, MON, MON + 3 * DAY_MS), 0, 'never below zero');
  assert.equal(predictedLevel(7, 2, MON + DAY_MS, MON), 7, 'a visit in the past predicts the level now');
  assert.equal(daysToEmpty(9, 3), 3);
  assert.equal(daysToEmpty(9, 0), null);
  const s: SelectionState = {
    machineId: 'M1',
    selection: 12,
    productCode: 'WATER',
    capacity: 20,
    par: 16,
    threshold: 4,
    level: 10,
    ratePerDay: 2,
  };
  assert.equal(selectionNeedsVisit(s, MON, MON + 4 * DAY_MS), false, '10 - 2 x 4 = 2 left at the next visit');
  assert.equal(selectionNeedsVisit(s, MON, MON + 5 * DAY_MS), true, '10 - 2 x 5 = 0: empty by then');
  assert.equal(selectionNeedsVisit({ ...s, level: 3, ratePerDay: 0 }, MON, MON + DAY_MS), true, 'below its threshold');
});

test('the pick list: par minus the level predicted at the visit, summed per product over the route', () => {
  const now = MON + 8 * H;
  const visit = MON + DAY_MS + 8 * H; // tomorrow, same time: one day on
  const base = { machineId: 'M1', capacity: 20, threshold: 2 };
  const route: SelectionState[] = [
    { ...base, selection: 1, productCode: 'WATER', par: 16, level: 10, ratePerDay: 2 }, // 16 - 8 = 8
    { ...base, selection: 2, productCode: 'COLA', par: 12, level: 12, ratePerDay: 0 }, // full: 0
    { ...base, selection: 3, productCode: 'WATER', par: 10, level: 1, ratePerDay: 3 }, // 10 - 0 = 10
    // 12 - floor(5 - 1.5) = 9
    { ...base, machineId: 'M2', selection: 1, productCode: 'COLA', par: 12, level: 5, ratePerDay: 1.5 },
    { ...base, machineId: 'M2', selection: 2, productCode: 'CHIPS', par: 8, level: -2, ratePerDay: 0 }, // 8 - 0 = 8
  ];
  assert.equal(toBring(route[3]!, now, visit), 9);
  assert.deepEqual(pickList(route, now, visit), [
    { productCode: 'WATER', quantity: 18, selections: 2 },
    { productCode: 'COLA', quantity: 9, selections: 1 },
    { productCode: 'CHIPS', quantity: 8, selections: 1 },
  ]);
});

test('a fill above capacity or below zero is refused with a reason', () => {
  assert.equal(fillProblem(12, 20, 20), null);
  assert.equal(fillProblem(12, 0, 20), null);
  assert.match(fillProblem(12, 21, 20)!, /selection 12: 21 is more than its capacity of 20/);
  assert.match(fillProblem(12, -1, 20)!, /below zero/);
  assert.match(fillProblem(12, 1.5, 20)!, /whole number/);
});

test('the next planned visit follows the route weekdays', () => {
  assert.equal(nextVisitAfter(MON, [1, 3, 5]), MON + 2 * DAY_MS, 'Monday -> Wednesday');
  assert.equal(nextVisitAfter(MON + 4 * DAY_MS, [1, 3, 5]), MON + 7 * DAY_MS, 'Friday -> next Monday');
  assert.equal(nextVisitAfter(MON, []), MON + DAY_MS, 'no weekdays: every day');
});
