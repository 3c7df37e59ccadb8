/**
 * The catalog document a machine accepted (docs/fleet.md, "The catalog document"), kept across
 * restarts beside the fleet overlay in the state directory (`fleet-catalog.json`), written
 * atomically and durably. The highest version verified is recorded apart, by the version floor
 * (src/trust/version-floor.ts, `catalog.version.json` in the same directory), before the document
 * is used: an older document is refused, a kept file put back included. At a start the kept
 * document is checked again with the keys of the trust file, as of the time it was accepted (a
 * document applied once stays applied after its window ends; a key since removed from the trust
 * file unseats it).
 */
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { QrvendConfig } from '../../config/schema.js';
import { writeFileAtomic } from '../../core/durable-file.js';
import type { Keyring } from '../../trust/keys.js';
import { VersionFloor } from '../../trust/version-floor.js';
import { MAX_CATALOG_BYTES, type SignedCatalog } from '../contract/catalog.js';
import { catalogDigest, checkCatalog, type BaseCatalog, type CatalogChecked } from './catalog-check.js';

export const CATALOG_FILE_NAME = 'fleet-catalog.json';

/** Where the accepted document is kept: beside the fleet overlay (the state directory). */
export function catalogFile(config: Pick<QrvendConfig, 'fleet'>): string {
  return join(dirname(config.fleet.configOverlay), CATALOG_FILE_NAME);
}

/** The version floor of the catalog, beside the kept document. */
export function catalogFloor(file: string): VersionFloor {
  return new VersionFloor({
    dir: dirname(file),
    document: 'catalog',
    stepBackHint: 'push a document with a higher version (docs/fleet.md, "The catalog document")',
  });
}

export interface KeptCatalog {
  acceptedAtMs: number;
  document: SignedCatalog;
}

export type KeptRead =
  | { kind: 'absent' }
  | { kind: 'kept'; kept: KeptCatalog; checked: Extract<CatalogChecked, { ok: true }> }
  | { kind: 'unusable'; version: number | null; message: string };

/** Writes the accepted document durably (temporary file, fsync, rename, fsync of the directory). */
export function keepCatalog(file: string, kept: KeptCatalog): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o750 });
  writeFileAtomic(file, `${JSON.stringify(kept)}\n`, 0o640);
}

/** Reads and checks the kept document again; never throws. */
export function readKeptCatalog(
  file: string,
  o: { keyring: Keyring | null; machineId: string; base: BaseCatalog },
): KeptRead {
  let text: string;
  try {
    if (statSync(file).size > MAX_CATALOG_BYTES * 2) return { kind: 'unusable', version: null, message: 'too large' };
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    return { kind: 'unusable', version: null, message: `cannot be read (${(err as NodeJS.ErrnoException).code})` };
  }
  let kept: KeptCatalog;
  try {
    kept = JSON.parse(text) as KeptCatalog;
    if (typeof kept !== 'object' || kept === null || !Number.isSafeInteger(kept.acceptedAtMs)) throw new Error();
  } catch {
    return { kind: 'unusable', version: null, message: 'damaged (not the JSON this agent writes)' };
  }
  const checked = checkCatalog(kept.document, { ...o, current: null, nowMs: kept.acceptedAtMs });
  if (!checked.ok)
    return { kind: 'unusable', version: checked.version, message: `${checked.reason}: ${checked.message}` };
  try {
    catalogFloor(file).check(checked.doc.version, catalogDigest(checked.doc));
  } catch (err) {
    return { kind: 'unusable', version: checked.doc.version, message: (err as Error).message };
  }
  return { kind: 'kept', kept, checked };
}
