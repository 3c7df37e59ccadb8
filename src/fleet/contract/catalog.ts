/**
 * The catalog document (docs/fleet.md, "The catalog document"): what a machine needs of its
 * planogram (each selection's names per language for the screens, measurement and unit for the
 * gateway's Product items, age limit for AgeLimitation), versioned per machine and signed by an
 * operator key of the scope `catalog`. It is published retained on the machine's own `catalog`
 * topic, so a machine that was away gets it when it is back; the machine checks it like every
 * fleet input, applies it between sessions and reports in its status what it runs and what it
 * refused. Part of the contract: the console and `qrvend fleet catalog` build what the machine checks.
 */
import { z } from 'zod';

/** The statement kind a catalog's signature covers (src/trust/canonical.ts). */
export const CATALOG_STATEMENT_KIND = 'catalog';
/** A signed catalog is at most this large (it rides one MQTT message). */
export const MAX_CATALOG_BYTES = 48 * 1024;
/** More selections than any vending machine has; a larger document is refused. */
export const MAX_CATALOG_ITEMS = 400;
/** A version is a positive integer below 2^31 (both databases and JSON carry it exactly). */
export const MAX_CATALOG_VERSION = 2_147_483_647;

/** An MDB item number as the catalog writes it: no leading zero, so one item has one key. */
export const ITEM_KEY = /^(0|[1-9]\d{0,4})$/;

/**
 * One selection's entry. The value ranges are the site file's own (src/config/schema/primitives.ts
 * CatalogItem); the machine checks each entry against that schema and refuses a document naming any value
 * out of range. Languages are two letters here; the machine takes only the ones its screens speak.
 */
export const CatalogDocumentItem = z.strictObject({
  name: z.string().min(1).max(255),
  names: z.record(z.string().regex(/^[a-z]{2}$/), z.string().min(1).max(255)).optional(),
  measurement: z.number().int().optional(),
  unitOfMeasurement: z.string().min(1).max(50).optional(),
  ageLimit: z.number().int().nullable().optional(),
});
export type CatalogDocumentItem = z.infer<typeof CatalogDocumentItem>;

/** What is signed: this machine, this version, these items (plus the window and nonce). */
export const UnsignedCatalog = z.strictObject({
  machineId: z.string().min(1).max(128),
  version: z.number().int().min(1).max(MAX_CATALOG_VERSION),
  items: z
    .record(z.string().regex(ITEM_KEY, 'item keys are MDB item numbers without leading zeros'), CatalogDocumentItem)
    .refine((items) => Object.keys(items).length <= MAX_CATALOG_ITEMS, `at most ${MAX_CATALOG_ITEMS} items`),
});
export type UnsignedCatalog = z.infer<typeof UnsignedCatalog>;

export const SignedCatalog = UnsignedCatalog.extend({ signature: z.unknown().optional() });
export type SignedCatalog = z.infer<typeof SignedCatalog>;

/** The statement an operator signs for `doc` (and the machine verifies). */
export function catalogStatement(doc: UnsignedCatalog): Record<string, unknown> {
  return { machineId: doc.machineId, version: doc.version, items: doc.items };
}

/** Why a machine refused a catalog document (its status says it, with a message for a person). */
export const CATALOG_REFUSALS = [
  /** Not JSON, not an object, over MAX_CATALOG_BYTES, a member missing or of the wrong type. */
  'malformed',
  /** Unsigned, not by a trusted key of the scope `catalog`, altered, expired or not yet valid. */
  'bad-signature',
  /** Its version is not above the one the machine has (a replay of an older document). */
  'older',
  /** Signed for another machine. */
  'other-machine',
  /** A value the site file's schema refuses, or an age limit below the site's for that item. */
  'out-of-range',
] as const;
export type CatalogRefusal = (typeof CATALOG_REFUSALS)[number];

/** What the retained status says of the catalog; absent on machines without the fleet catalog. */
export const CatalogStatus = z.object({
  /** The version the machine sells by; null: the site file's catalog alone. */
  version: z.number().int().min(1).max(MAX_CATALOG_VERSION).nullable(),
  /** Verified and kept, waiting for the machine to be between sessions. */
  pending: z.number().int().min(1).max(MAX_CATALOG_VERSION).nullable(),
  /** The last document refused, with why; null when none was since the start. */
  refused: z
    .object({
      version: z.number().int().nullable(),
      reason: z.enum(CATALOG_REFUSALS),
      message: z.string().max(512),
      at: z.string().max(40),
    })
    .nullable(),
});
export type CatalogStatus = z.infer<typeof CatalogStatus>;
