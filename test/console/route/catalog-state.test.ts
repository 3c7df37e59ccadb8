/**
 * Where a prepared catalog version stands (src/console/route/catalog-state.ts), by what the machine
 * reported, worked out by hand: intended, delivered, applied, superseded, refused (from the status,
 * or kept from an earlier one); the next version after every one known; a document's items.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { catalogDocument, nextVersion, pushStanding } from '../../../src/console/route/catalog-state.js';
import type { CatalogStatus } from '../../../src/fleet/contract/catalog.js';

const status = (version: number | null, pending: number | null, refused: number | null = null): CatalogStatus => ({
  version,
  pending,
  refused: refused === null ? null : { version: refused, reason: 'older', message: 'not above 3', at: '' },
});

test('the standing of version 3', () => {
  const cases: [CatalogStatus | null, string][] = [
    [null, 'intended'], // no report yet
    [status(2, null), 'intended'], // the machine sells by 2 and has heard of nothing newer
    [status(2, 3), 'delivered'], // verified, waiting for the sale to end
    [status(3, null), 'applied'],
    [status(4, null), 'superseded'],
    [status(2, null, 3), 'refused'],
    [status(3, null, 3), 'applied'], // a copy of 3 refused as not newer: 3 still runs
  ];
  for (const [s, state] of cases) assert.equal(pushStanding(3, s).state, state, JSON.stringify(s));
  const kept = pushStanding(3, status(2, null, 1), { reason: 'bad-signature', message: 'altered' });
  assert.deepEqual(kept, { state: 'refused', reason: 'bad-signature', message: 'altered' });
});

test('the next version is after every one the console or the machine knows', () => {
  assert.equal(nextVersion(null, null), 1);
  assert.equal(nextVersion(2, status(1, null)), 3);
  assert.equal(nextVersion(2, status(4, 5, 7)), 8);
});

test("a machine's document names each selection's product; an unknown product is refused", () => {
  const products = new Map([
    ['WATER', { code: 'WATER', name: 'Water', names: { de: 'Wasser' }, measurement: 500, unit: 'ml', ageLimit: null }],
  ]);
  const ok = catalogDocument('M1', 4, [{ selection: 12, productCode: 'WATER' }], products);
  assert.deepEqual(ok, {
    ok: true,
    document: {
      machineId: 'M1',
      version: 4,
      items: {
        '12': { name: 'Water', names: { de: 'Wasser' }, measurement: 500, unitOfMeasurement: 'ml', ageLimit: null },
      },
    },
  });
  const bad = catalogDocument('M1', 4, [{ selection: 12, productCode: 'GIN' }], products);
  assert.deepEqual(bad, { ok: false, message: 'selection 12: product GIN is unknown' });
});
