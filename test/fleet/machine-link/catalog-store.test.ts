/**
 * The kept catalog document and its version floor (src/fleet/machine-link/catalog-store.ts,
 * src/trust/version-floor.ts): a kept file put back from before a newer version was verified is
 * not used at the next start.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { keyringOf, rawPublicKey } from '../../../src/trust/keys.js';
import { catalogFloor, keepCatalog, readKeptCatalog } from '../../../src/fleet/machine-link/catalog-store.js';
import { catalogDigest } from '../../../src/fleet/machine-link/catalog-check.js';
import { signCatalogs } from '../../../src/fleet/operator/catalog.js';
import { testKey } from '../support/operator-keys.js';

const key = testKey('planner', ['catalog']);
const keyring = keyringOf(
  { keys: [{ id: key.keyId, publicKey: rawPublicKey(key.publicKey), scopes: key.scopes }] },
  null,
);
const doc = (version: number) =>
  signCatalogs(
    { machineId: 'VM-1', version, items: { '12': { name: `Water v${version}` } } },
    {
      keyId: key.keyId,
      key: key.key,
      nowMs: Date.now(),
    },
  )[0]!;

test('a kept file older than the floor is not used; the newest kept is', () => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-catalog-store-'));
  try {
    const file = join(dir, 'fleet-catalog.json');
    const o = { keyring, machineId: 'VM-1', base: {} };
    assert.equal(readKeptCatalog(file, o).kind, 'absent');
    const v1 = doc(1);
    const v2 = doc(2);
    catalogFloor(file).admit(2, catalogDigest(v2));
    keepCatalog(file, { acceptedAtMs: Date.now(), document: v2 });
    const kept = readKeptCatalog(file, o);
    assert.equal(kept.kind, 'kept');
    if (kept.kind === 'kept') assert.equal(kept.checked.catalog['12']!.name, 'Water v2');
    keepCatalog(file, { acceptedAtMs: Date.now(), document: v1 }); // a backup put back
    const back = readKeptCatalog(file, o);
    assert.equal(back.kind, 'unusable');
    if (back.kind === 'unusable') assert.match(back.message, /older than version 2/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
