/**
 * Planograms, "needs a visit", a route's pick list and the catalog pushes in the database, on
 * SQLite and on PostgreSQL (a server of the test's own, where Debian's postgresql is installed):
 * an imported planogram copied onto the stock rows, a machine's own values and a change of template
 * there too; the fleet's "needs a visit" (one SQL scan) agreeing with the arithmetic of
 * stock-math.ts on a table worked out by hand; the pick list; each catalog push's standing by what
 * the machines reported.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readPlanogramCsv } from '../../../src/console/route/planogram-file.js';
import { DAY_MS, nextVisitAfter, selectionNeedsVisit } from '../../../src/console/route/stock-math.js';
import {
  applyTemplate,
  knownPlanograms,
  setOverride,
  writePlanogramSet,
} from '../../../src/console/store/planogram-store.js';
import { recordFill, selectionStates } from '../../../src/console/store/route-queries.js';
import { machinesNeedingVisit, routeDay, saveRoute } from '../../../src/console/store/route-store.js';
import { catalogMachines, prepareCatalogs } from '../../../src/console/store/catalog-queries.js';
import { storeEventBatch } from '../../../src/console/store/event-batch.js';
import { storeStatus } from '../../../src/console/store/ingest-queries.js';
import type { FleetEvent, StatusMessage } from '../../../src/fleet/contract/index.js';
import { DATABASES, openDatabase, stopDatabases } from './databases.js';
import type { TestStore } from '../support/store.js';

after(() => stopDatabases());

// Monday 7 December 2026 (UTC); the route R1 is visited on Mondays and Thursdays.
const DAY = Date.UTC(2026, 11, 7);
const NOW = DAY + 8 * 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();

const PLAN = [
  'template,model,machine,selection,product,name,names,capacity,par,threshold,price',
  'T,Tower 2,,1,WATER,Water,de=Wasser,10,8,2,1.50',
  'T,Tower 2,,2,COLA,Cola,,10,8,2,2.00',
  'T,,A,,,,,,,,',
  'T,,B,,,,,,,,',
  'T,,C,,,,,,,,',
].join('\n');

async function planned(store: TestStore, machine: string) {
  const rows = await store.db
    .selectFrom('stock')
    .select(['selection', 'level', 'product_code', 'par', 'price_milli'])
    .where('machine_id', '=', machine)
    .orderBy('selection')
    .execute();
  const n = (v: unknown) => (v === null ? null : Number(v));
  return rows.map((r) => [Number(r.selection), Number(r.level), r.product_code, n(r.par), n(r.price_milli)]);
}

let seq = 0;
/** `n` cash sales of `item` on `machine` at `at` (each lowers the level by one). */
async function sell(store: TestStore, machine: string, item: number, n: number, at: number) {
  const events = Array.from({ length: n }, () => {
    const event = {
      kind: 'cash-sale',
      eventId: `c-${++seq}`,
      at: iso(at),
      machineId: machine,
      item,
      price: '1.50',
      currency: 'EUR',
    };
    return {
      machineId: machine,
      event: event as unknown as FleetEvent,
      receivedAt: iso(at),
      raw: JSON.stringify(event),
    };
  });
  if (events.length > 0) await storeEventBatch(store.db, events);
}

function status(machineId: string, catalog: unknown): StatusMessage {
  return {
    online: true,
    machineId,
    terminalId: `T-${machineId}`,
    uniQr: null,
    version: '1.4.0',
    startedAt: iso(NOW),
    reader: 'enabled',
    readerDisabledRemotely: false,
    gateway: 'online',
    outbox: { pending: 0, dead: 0 },
    alarms: [],
    acceptsRelayedStart: false,
    catalog,
    at: iso(NOW),
  } as StatusMessage;
}

for (const kind of DATABASES) {
  test(`planograms on the stock rows, "needs a visit", the pick list, catalog pushes (${kind})`, async (t) => {
    const store = await openDatabase(t, kind);
    if (store === null) return;
    try {
      const db = store.db;
      const parsed = readPlanogramCsv(PLAN, await knownPlanograms(db));
      assert.ok(parsed.ok);
      await writePlanogramSet(db, parsed.set, NOW - 3 * DAY_MS);
      assert.deepEqual(await planned(store, 'A'), [
        [1, 0, 'WATER', 8, 1500],
        [2, 0, 'COLA', 8, 2000],
      ]);
      // A's own par for selection 1, then back; the fill and sales below see the template's.
      await setOverride(db, 'A', 1, { par: 6 }, NOW - 3 * DAY_MS);
      assert.equal(Number((await planned(store, 'A'))[0]![3]), 6);
      await setOverride(db, 'A', 1, {}, NOW - 3 * DAY_MS);
      assert.equal(Number((await planned(store, 'A'))[0]![3]), 8);

      for (const m of ['A', 'B', 'C'])
        await recordFill(db, { machineId: m, counts: 'par', user: 'dana', note: '', nowMs: NOW - 2 * DAY_MS });
      // Sold since the fill two days ago (worked out below): A 4 waters; B 1 water, 7 colas; C 2 waters.
      await sell(store, 'A', 1, 4, NOW - DAY_MS);
      await sell(store, 'B', 1, 1, NOW - DAY_MS);
      await sell(store, 'B', 2, 7, NOW - DAY_MS);
      await sell(store, 'C', 1, 2, NOW - DAY_MS);
      await saveRoute(db, 'R1', [1, 4], ['A', 'B']);

      // A: water at 4, 2 a day, Thursday 00:00 is 2 2/3 days away: empty before it (emptying).
      // B: cola at 1, below its threshold of 2 (below); water at 7, half a day: fine.
      // C: on no route, visited tomorrow at the latest: water at 6, 1 a day, 2/3 of a day: fine.
      const needs = await machinesNeedingVisit(db, { dayMs: DAY, nowMs: NOW, limit: 100, offset: 0 });
      assert.deepEqual(
        needs.rows.map((n) => [n.machineId, n.below, n.soonestEmptyMs, n.emptiesBeforeNext, n.nextVisitMs]),
        [
          // A's water: 4 left at 4 in 2 days is empty in 2 days; B's water: 7 at 1 in 2 days, 14.
          ['A', 0, 2 * DAY_MS, true, DAY + 3 * DAY_MS],
          ['B', 1, 14 * DAY_MS, false, DAY + 3 * DAY_MS],
        ],
      );
      assert.equal(needs.total, 2);
      // The same by the floating-point arithmetic of stock-math.ts, selection by selection.
      const states = await selectionStates(db, ['A', 'B', 'C'], NOW);
      const next = (m: string) => (m === 'C' ? DAY + DAY_MS : nextVisitAfter(DAY, [1, 4]));
      const byJs = [
        ...new Set(states.filter((s) => selectionNeedsVisit(s, NOW, next(s.machineId))).map((s) => s.machineId)),
      ];
      assert.deepEqual(byJs, ['A', 'B']);

      // The pick list at the visit now: A's water 8 - 4; B's water 8 - 7 and cola 8 - 1.
      const day = await routeDay(db, 'R1', DAY, NOW);
      assert.deepEqual(day?.pick, [
        { productCode: 'COLA', quantity: 7, selections: 1 },
        { productCode: 'WATER', quantity: 5, selections: 2 },
      ]);
      assert.deepEqual(
        day?.machines.map((m) => [m.machineId, m.needs !== null, m.selections.map((s) => s.bring)]),
        [
          ['A', true, [4, 0]],
          ['B', true, [1, 7]],
        ],
      );

      // Another template for C: its stock rows follow; a selection it no longer has keeps its level, unplanned.
      const other = readPlanogramCsv(
        'template,selection,product,capacity,par,threshold,price\nU,1,COLA,12,10,3,2.20',
        await knownPlanograms(db),
      );
      assert.ok(other.ok);
      await writePlanogramSet(db, other.set, NOW);
      await applyTemplate(db, 'U', ['C'], NOW);
      assert.deepEqual(
        (await planned(store, 'C')).map((r) => [r[0], r[1], r[2]]),
        [
          [1, 6, 'COLA'],
          [2, 8, null],
        ],
      );

      // Catalog pushes: version 1 for each; A applied it, B waits, C refused it.
      const first = await prepareCatalogs(db, ['A', 'B', 'C', 'Z'], 'dana', NOW);
      assert.deepEqual(first.skipped, [{ machineId: 'Z', why: 'no planogram: apply a template first' }]);
      assert.deepEqual(
        first.documents.find((d) => d.machineId === 'A'),
        {
          machineId: 'A',
          version: 1,
          items: {
            '1': { name: 'Water', names: { de: 'Wasser' }, measurement: 1, unitOfMeasurement: 'Unit', ageLimit: null },
            '2': { name: 'Cola', measurement: 1, unitOfMeasurement: 'Unit', ageLimit: null },
          },
        },
      );
      await storeStatus(db, 'A', status('A', { version: 1, pending: null, refused: null }), iso(NOW));
      await storeStatus(db, 'B', status('B', { version: null, pending: 1, refused: null }), iso(NOW));
      const refused = { version: 1, reason: 'bad-signature', message: 'not signed by a catalog key', at: iso(NOW) };
      await storeStatus(db, 'C', status('C', { version: null, pending: null, refused }), iso(NOW));
      assert.deepEqual(
        (await catalogMachines(db, first.preparedAt)).map((m) => [m.machineId, m.version, m.state, m.reason]),
        [
          ['A', 1, 'applied', null],
          ['B', 1, 'delivered', null],
          ['C', 1, 'refused', 'bad-signature'],
        ],
      );
      const second = await prepareCatalogs(db, ['A'], 'dana', NOW + 1000);
      assert.equal(second.documents[0]?.version, 2);
    } finally {
      await store.remove();
    }
  });
}
