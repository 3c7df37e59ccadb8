/**
 * Checks a catalog document (src/fleet/contract/catalog.ts; docs/fleet.md, "The catalog document")
 * as the machine receives it, in this order, each refusal with its own reason: bounded and
 * well-formed (`malformed`), signed by a trusted key of the scope `catalog` within its window
 * (`bad-signature`), for this machine (`other-machine`), newer than the one it has (`older`),
 * every value within the site file's own ranges and no age limit below the site's for its item
 * (`out-of-range`). Pure but for the signature arithmetic: the time and the keys come in.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { CatalogItem } from '../../config/schema/primitives.js';
import type { CatalogEntry } from '../../config/schema.js';
import { MAX_DOCUMENT_LIFETIME_MS, verifyStatement } from '../../trust/signed.js';
import { canonicalJson } from '../../trust/canonical.js';
import type { Keyring } from '../../trust/keys.js';
import {
  CATALOG_STATEMENT_KIND,
  MAX_CATALOG_BYTES,
  SignedCatalog,
  catalogStatement,
  type CatalogRefusal,
} from '../contract/catalog.js';
import { CATALOG_SCOPE } from '../contract/scopes.js';

/** The site file's catalog (and the fleet overlay's), under the document. */
export type BaseCatalog = Readonly<Record<string, CatalogEntry>>;

export interface CatalogCheckInput {
  keyring: Keyring | null;
  machineId: string;
  /** The version the machine has (its floor, src/trust/version-floor.ts) and its content's digest, or null. */
  current: { version: number; digest: string | undefined } | null;
  base: BaseCatalog;
  /** Wall clock, epoch ms: the signature's window. */
  nowMs: number;
}

export type CatalogChecked =
  /** `same`: the very document kept (a retained message delivered again at a reconnect): nothing to do. */
  | { ok: true; same: boolean; doc: SignedCatalog; keyId: string; catalog: Record<string, CatalogEntry> }
  | { ok: false; version: number | null; reason: CatalogRefusal; message: string };

function refuse(version: number | null, reason: CatalogRefusal, message: string): CatalogChecked {
  return { ok: false, version, reason, message: message.slice(0, 512) };
}

function issueText(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`;
}

/** A digest of what a document says (machine, version, items): the same document signed twice has the same. */
export function catalogDigest(doc: SignedCatalog): string {
  return createHash('sha256')
    .update(canonicalJson(catalogStatement(doc)))
    .digest('base64url');
}

/** The bytes of a message as a JSON value, or why not. */
export function readCatalogPayload(payload: Uint8Array): { ok: true; value: unknown } | { ok: false; message: string } {
  if (payload.byteLength > MAX_CATALOG_BYTES) return { ok: false, message: `more than ${MAX_CATALOG_BYTES} bytes` };
  try {
    return { ok: true, value: JSON.parse(Buffer.from(payload).toString('utf8')) };
  } catch {
    return { ok: false, message: 'not JSON' };
  }
}

/**
 * The site's catalog with the document's items over it, item by item; each item checked against
 * the site file's schema, and its age limit never below the site's for that item.
 */
export function layerCatalog(
  base: BaseCatalog,
  items: SignedCatalog['items'],
): { ok: true; catalog: Record<string, CatalogEntry> } | { ok: false; message: string } {
  const catalog: Record<string, CatalogEntry> = { ...base };
  for (const [key, item] of Object.entries(items)) {
    const parsed = CatalogItem.safeParse(item);
    if (!parsed.success) return { ok: false, message: `items.${key}.${issueText(parsed.error)}` };
    const floor = base[key]?.ageLimit ?? null;
    const age = parsed.data.ageLimit;
    if (floor !== null && (age === null || age < floor)) {
      return {
        ok: false,
        message: `items.${key}.ageLimit: ${age ?? 'none'} is below the site file's ${floor} for this item`,
      };
    }
    catalog[key] = parsed.data;
  }
  return { ok: true, catalog };
}

/** Checks a received document (already parsed from JSON) in the documented order. */
export function checkCatalog(value: unknown, input: CatalogCheckInput): CatalogChecked {
  const version =
    typeof value === 'object' && value !== null && Number.isSafeInteger((value as { version?: unknown }).version)
      ? ((value as { version: number }).version ?? null)
      : null;
  const parsed = SignedCatalog.safeParse(value);
  if (!parsed.success) return refuse(version, 'malformed', issueText(parsed.error));
  const doc = parsed.data;
  const sig = doc.signature as { format?: unknown } | undefined;
  if (sig !== undefined && sig !== null && typeof sig === 'object' && sig.format !== 2) {
    return refuse(doc.version, 'bad-signature', 'signed in format 1: sign it again with qrvend fleet catalog sign');
  }
  const checked = verifyStatement({
    kind: CATALOG_STATEMENT_KIND,
    body: catalogStatement(doc),
    signature: doc.signature,
    scope: CATALOG_SCOPE,
    keyring: input.keyring,
    nowMs: input.nowMs,
    maxLifetimeMs: MAX_DOCUMENT_LIFETIME_MS,
  });
  if (!checked.ok) return refuse(doc.version, 'bad-signature', `${checked.reason}: ${checked.message}`);
  if (doc.machineId !== input.machineId) {
    return refuse(doc.version, 'other-machine', `signed for ${doc.machineId}, this machine is ${input.machineId}`);
  }
  const same = input.current !== null && doc.version === input.current.version;
  const digest = input.current?.digest;
  if (same && digest !== undefined && catalogDigest(doc) !== digest) {
    return refuse(doc.version, 'older', `version ${doc.version} is the version kept, with other contents`);
  }
  if (input.current !== null && doc.version < input.current.version) {
    const kept = input.current.version;
    return refuse(doc.version, 'older', `version ${doc.version} is older than the version ${kept} kept`);
  }
  const layered = layerCatalog(input.base, doc.items);
  if (!layered.ok) return refuse(doc.version, 'out-of-range', layered.message);
  return { ok: true, same, doc, keyId: checked.keyId, catalog: layered.catalog };
}
