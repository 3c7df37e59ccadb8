/**
 * The catalog documents the console prepares (docs/fleet.md, "The catalog document"), pure: a
 * machine's document from its planogram and the products, and where a prepared version stands on
 * its machine by what the machine last reported in its status: intended (prepared, nothing heard
 * yet), delivered (verified and kept, waiting for the machine to be between sessions), applied
 * (the machine sells by it, or by a newer one: superseded), or refused, with the machine's reason.
 */
import {
  MAX_CATALOG_BYTES,
  UnsignedCatalog,
  type CatalogDocumentItem,
  type CatalogRefusal,
  type CatalogStatus,
} from '../../fleet/contract/catalog.js';
import type { Product } from './planogram-rules.js';

export type PushState = 'intended' | 'delivered' | 'applied' | 'superseded' | 'refused';

export interface PushStanding {
  state: PushState;
  reason: CatalogRefusal | null;
  message: string | null;
}

/**
 * Where `version` stands by the machine's last status, and by the refusal of it kept when an
 * earlier status said so (a status names only the machine's last refusal).
 */
export function pushStanding(
  version: number,
  status: CatalogStatus | null,
  kept: { reason: CatalogRefusal; message: string } | null = null,
): PushStanding {
  const none = { reason: null, message: null };
  if (status !== null && status.version !== null && status.version >= version)
    return { state: status.version === version ? 'applied' : 'superseded', ...none };
  if (status?.refused != null && status.refused.version === version)
    return { state: 'refused', reason: status.refused.reason, message: status.refused.message };
  if (kept !== null) return { state: 'refused', ...kept };
  if (status === null) return { state: 'intended', ...none };
  if (status.pending !== null && status.pending >= version) return { state: 'delivered', ...none };
  return { state: 'intended', ...none };
}

/** The version after every one the machine or the console knows of. */
export function nextVersion(lastPrepared: number | null, status: CatalogStatus | null): number {
  return Math.max(lastPrepared ?? 0, status?.version ?? 0, status?.pending ?? 0, status?.refused?.version ?? 0) + 1;
}

/** Room left for the signature a document gets (src/fleet/operator/catalog.ts signCatalogs). */
const SIGNATURE_ROOM = 2048;

/** A machine's document: per selection its product's names, measurement, unit and age limit. */
export function catalogDocument(
  machineId: string,
  version: number,
  selections: { selection: number; productCode: string }[],
  products: ReadonlyMap<string, Product>,
): { ok: true; document: UnsignedCatalog } | { ok: false; message: string } {
  const items: Record<string, CatalogDocumentItem> = {};
  for (const s of selections) {
    const p = products.get(s.productCode);
    if (p === undefined) return { ok: false, message: `selection ${s.selection}: product ${s.productCode} is unknown` };
    items[String(s.selection)] = {
      name: p.name,
      ...(Object.keys(p.names).length === 0 ? {} : { names: p.names as Record<string, string> }),
      measurement: p.measurement,
      unitOfMeasurement: p.unit,
      ageLimit: p.ageLimit,
    };
  }
  const parsed = UnsignedCatalog.safeParse({ machineId, version, items });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, message: `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}` };
  }
  if (Buffer.byteLength(JSON.stringify(parsed.data)) > MAX_CATALOG_BYTES - SIGNATURE_ROOM)
    return { ok: false, message: `over ${MAX_CATALOG_BYTES - SIGNATURE_ROOM} bytes: fewer or shorter names` };
  return { ok: true, document: parsed.data };
}
