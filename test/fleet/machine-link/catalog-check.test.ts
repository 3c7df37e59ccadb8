/**
 * The machine's check of a catalog document (src/fleet/machine-link/catalog-check.ts): each
 * refusal with its reason, in the documented order, the one kept recognised, the site file's
 * catalog under the document and its age limits a floor.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyringOf, rawPublicKey } from '../../../src/trust/keys.js';
import { catalogDigest, checkCatalog } from '../../../src/fleet/machine-link/catalog-check.js';
import { signCatalogs } from '../../../src/fleet/operator/catalog.js';
import type { SignedCatalog } from '../../../src/fleet/contract/catalog.js';
import { testKey } from '../support/operator-keys.js';

const catalogKey = testKey('planner', ['catalog']);
const configureKey = testKey('cfg', ['configure']);
const keyring = keyringOf(
  {
    keys: [catalogKey, configureKey].map((k) => ({
      id: k.keyId,
      publicKey: rawPublicKey(k.publicKey),
      scopes: k.scopes,
    })),
  },
  null,
);
const NOW = Date.UTC(2026, 10, 30, 12);
/** The site file's catalog: item 12 water, item 21 beer with its legal age of 18. */
const base = {
  '12': { name: 'Water', names: {}, measurement: 500, unitOfMeasurement: 'ml', ageLimit: null },
  '21': { name: 'Beer', names: {}, measurement: 330, unitOfMeasurement: 'ml', ageLimit: 18 },
};
const items = {
  '12': { name: 'Still water', names: { de: 'Stilles Wasser' }, measurement: 500, unitOfMeasurement: 'ml' },
};

function signed(doc: Record<string, unknown>, key = catalogKey): SignedCatalog {
  return signCatalogs(doc, { keyId: key.keyId, key: key.key, nowMs: NOW })[0]!;
}

const input: Parameters<typeof checkCatalog>[1] = {
  keyring,
  machineId: 'VM-1',
  current: null,
  base,
  nowMs: NOW + 1000,
};

test('a signed document for this machine layers its items over the site catalog', () => {
  const r = checkCatalog(signed({ machineId: 'VM-1', version: 3, items }), input);
  assert.ok(r.ok);
  assert.equal(r.same, false);
  assert.equal(r.catalog['12']!.name, 'Still water');
  assert.deepEqual(r.catalog['12']!.names, { de: 'Stilles Wasser' });
  assert.equal(r.catalog['21']!.name, 'Beer', 'the site file stays the default under it');
});

test('each refusal names its reason', () => {
  const doc = signed({ machineId: 'VM-1', version: 3, items });
  const tampered = { ...doc, items: { '12': { ...items['12'], name: 'Gin' } } };
  const cases: [unknown, string, Partial<typeof input>?][] = [
    [{ machineId: 'VM-1', version: 'x', items }, 'malformed'],
    [{ machineId: 'VM-1', version: 3, items }, 'bad-signature'],
    [tampered, 'bad-signature'],
    [signed({ machineId: 'VM-1', version: 3, items }, configureKey), 'bad-signature'],
    [doc, 'bad-signature', { nowMs: NOW + 400 * 24 * 3600_000 }],
    [signed({ machineId: 'VM-2', version: 3, items }), 'other-machine'],
    [doc, 'older', { current: { version: 4, digest: 'x' } }],
    [doc, 'older', { current: { version: 3, digest: 'another' } }],
    [signed({ machineId: 'VM-1', version: 3, items: { '12': { name: 'W', measurement: -1 } } }), 'out-of-range'],
    [signed({ machineId: 'VM-1', version: 3, items: { '12': { name: 'W', names: { xx: 'W' } } } }), 'out-of-range'],
    [signed({ machineId: 'VM-1', version: 3, items: { '21': { name: 'Beer', ageLimit: 16 } } }), 'out-of-range'],
    [signed({ machineId: 'VM-1', version: 3, items: { '21': { name: 'Beer' } } }), 'out-of-range'],
  ];
  for (const [value, reason, over] of cases) {
    const r = checkCatalog(value, { ...input, ...over });
    assert.equal(r.ok, false, `${reason}: ${JSON.stringify(value).slice(0, 80)}`);
    if (!r.ok) assert.equal(r.reason, reason, r.message);
  }
});

test('the document kept, delivered again (a retained message at a reconnect) or signed again, is the same', () => {
  const doc = signed({ machineId: 'VM-1', version: 3, items });
  const digest = catalogDigest(doc);
  const again = checkCatalog(doc, { ...input, current: { version: 3, digest } });
  assert.ok(again.ok && again.same);
  const resigned = checkCatalog(signed({ machineId: 'VM-1', version: 3, items }), {
    ...input,
    current: { version: 3, digest },
  });
  assert.ok(resigned.ok && resigned.same, 'signed again, same contents');
  const newer = checkCatalog(signed({ machineId: 'VM-1', version: 4, items }), {
    ...input,
    current: { version: 3, digest },
  });
  assert.ok(newer.ok && !newer.same);
});

test('an age limit may be raised above the site file, never lowered below it', () => {
  const r = checkCatalog(
    signed({ machineId: 'VM-1', version: 1, items: { '21': { name: 'Strong beer', ageLimit: 21 } } }),
    input,
  );
  assert.ok(r.ok);
  assert.equal(r.catalog['21']!.ageLimit, 21);
});
