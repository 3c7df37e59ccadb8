/**
 * The conditions that read the route's store (src/console/alerts/conditions.ts): a selection below
 * its stock threshold, a price the VMC asks that differs from the planogram's, and a rule scoped
 * to a route watching that route's machines only.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { holdingNow, type RuleRow } from '../../../src/console/alerts/conditions.js';
import { refreshPlanned } from '../../../src/console/store/planned-stock.js';
import { openDatabase, stopDatabases } from '../store/databases.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

after(stopDatabases);

const rule = (condition: string, extra: Partial<RuleRow> = {}): RuleRow => ({
  id: 1,
  owner: 'ana',
  name: 'r',
  condition,
  alarm_code: '',
  threshold_minutes: 0,
  machines: '',
  route_id: '',
  days: '1,2,3,4,5,6,7',
  from_minute: 0,
  to_minute: 1440,
  time_zone: 'UTC',
  hold_minutes: 0,
  repeat_minutes: 0,
  notify_cleared: 0,
  email: 0,
  endpoint_id: null,
  enabled: 1,
  created_at: '',
  updated_at: '',
  ...extra,
});

test('stock below threshold, a differing price, and a route scope', { timeout: TEST_DEADLINE_MS }, async (t) => {
  const store = (await openDatabase(t, 'sqlite'))!;
  const db = store.db;
  try {
    await db.insertInto('templates').values({ template_id: 'snack', model: 'X', updated_at: '' }).execute();
    await db
      .insertInto('template_selections')
      .values([
        {
          template_id: 'snack',
          selection: 11,
          product_code: 'COLA',
          capacity: 10,
          par: 8,
          threshold: 3,
          price_milli: 1500,
        },
        {
          template_id: 'snack',
          selection: 12,
          product_code: 'WATER',
          capacity: 10,
          par: 8,
          threshold: 3,
          price_milli: 1000,
        },
      ])
      .execute();
    await db
      .insertInto('machine_templates')
      .values([
        { machine_id: 'M-1', template_id: 'snack' },
        { machine_id: 'M-2', template_id: 'snack' },
      ])
      .execute();
    const stock = (machine_id: string, selection: number, level: number, asked: number | null) => ({
      machine_id,
      selection,
      level,
      filled_at_ms: null,
      cycle_vends: 0,
      cycle_since_ms: 0,
      prev_vends: 0,
      prev_ms: 0,
      asked_price_milli: asked,
      asked_at: asked === null ? null : '2026-12-01T08:00:00.000Z',
    });
    await db
      .insertInto('stock')
      .values([
        stock('M-1', 11, 2, 1600),
        stock('M-1', 12, 5, 1000),
        stock('M-2', 11, 6, 1500),
        stock('M-2', 12, 9, null),
      ])
      .execute();
    await db.insertInto('routes').values({ route_id: 'north', weekdays: '1' }).execute();
    await db.insertInto('route_machines').values({ route_id: 'north', position: 0, machine_id: 'M-2' }).execute();
    const now = Date.parse('2026-12-01T09:00:00.000Z');
    // The store's own planogram edits copy the planogram onto the stock rows; rows put in by hand need the same.
    await refreshPlanned(db, 'all', now);
    const low = await holdingNow(db, rule('stock-low'), now);
    assert.deepEqual([...low.keys()], ['M-1']);
    assert.equal(low.get('M-1')!.detail, 'selection 11 (COLA): 2 left, threshold 3');
    const prices = await holdingNow(db, rule('price-differs'), now);
    assert.equal(prices.get('M-1')!.detail, 'selection 11: the VMC asks 1.60, the planogram says 1.50');
    assert.equal(prices.get('M-1')!.since, Date.parse('2026-12-01T08:00:00.000Z'));
    assert.deepEqual([...(await holdingNow(db, rule('stock-low', { route_id: 'north' }), now)).keys()], []);
    assert.deepEqual([...(await holdingNow(db, rule('price-differs', { route_id: 'north' }), now)).keys()], []);
    assert.deepEqual([...(await holdingNow(db, rule('stock-low', { route_id: 'gone' }), now)).keys()], []);
  } finally {
    await store.remove();
  }
});
