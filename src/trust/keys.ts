/**
 * Operator keys (docs/decisions/fleet-link.md, "Trust"). A machine holds public keys only, in a root-owned
 * trust file named by the site config; each key has an id (so a signer says which key, and keys
 * rotate by adding the new one before removing the old) and the scopes it may sign for.
 *
 * Trust file (JSON, at most MAX_TRUST_FILE_BYTES):
 * { "keys": [ { "id": "ops-2026", "publicKey": "<base64 of the 32-byte
 * Ed25519 key>", "scopes": ["read", "operate"] } ] }
 *
 * Private keys are PKCS#8 PEM files made by `qrvend fleet keygen`; they live with the operator
 * (or the relay, for its `start` key), never on a machine.
 */
import type { KeyObject } from 'node:crypto';
import { statSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { publicKeyListedTwice } from './key-owner.js';
import { publicKeyFromRaw, TrustFileError } from './key-material.js';
import { trustFileProblem, trustFileStat } from './trust-file-checks.js';

// The key files and key bytes themselves, without zod, for the main thread (machine-key.ts).
export {
  generateSigningKey,
  loadPrivateKey,
  publicKeyFromRaw,
  rawPublicKey,
  TrustFileError,
  type GeneratedKey,
} from './key-material.js';

/**
 * What a key may sign:
 * - read: ping, doctor, outbox.list, config.get;
 * - operate: reader.disable/enable, outbox.retry, service.restart, an audit read;
 * - configure: config.set;
 * - update: a software update offer;
 * - start: a relayed Start (the relay's own key);
 * - registry: which machine owns which TerminalId / UniQR (read by the relay);
 * - catalog: a machine's catalog document (product names, measures, age limits; docs/fleet.md).
 */
export const SCOPES = ['read', 'operate', 'configure', 'update', 'start', 'registry', 'catalog'] as const;
export type Scope = (typeof SCOPES)[number];

export const MAX_TRUST_FILE_BYTES = 64 * 1024;
export const MAX_KEYS = 64;
export const KEY_ID = /^[A-Za-z0-9._:-]{1,64}$/;

const TrustFileSchema = z.strictObject({
  keys: z
    .array(
      z.strictObject({
        id: z.string().regex(KEY_ID, 'letters, digits and . _ : - only, 1 to 64'),
        publicKey: z
          .string()
          .regex(/^[A-Za-z0-9+/]{43}=$/, 'the base64 of a 32-byte Ed25519 public key (44 characters)'),
        scopes: z.array(z.enum(SCOPES)).min(1).max(SCOPES.length),
        /** Free text for the operator (who holds it, since when). */
        comment: z.string().max(200).optional(),
      }),
    )
    .max(MAX_KEYS),
});

export interface TrustedKey {
  id: string;
  key: KeyObject;
  scopes: ReadonlySet<Scope>;
}

export interface Keyring {
  /** Where it was read from, for messages (null: built in memory). */
  source: string | null;
  byId: ReadonlyMap<string, TrustedKey>;
}

/** Builds a keyring from parsed entries (the trust file's content). */
export function keyringOf(value: unknown, source: string | null): Keyring {
  const parsed = TrustFileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TrustFileError(`${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  const byId = new Map<string, TrustedKey>();
  for (const entry of parsed.data.keys) {
    if (byId.has(entry.id)) throw new TrustFileError(`keys: the id ${entry.id} is given twice`);
    byId.set(entry.id, { id: entry.id, key: publicKeyFromRaw(entry.publicKey), scopes: new Set(entry.scopes) });
  }
  // One key under two ids would be two keys to every per-key record (seen nonces, budgets).
  const twice = publicKeyListedTwice(parsed.data.keys);
  if (twice !== null) {
    const [first, second] = twice.ids;
    throw new TrustFileError(`keys: one public key is listed twice, as ${first} and ${second}; keep one entry`);
  }
  return { source, byId };
}

/**
 * Reads a trust file. Refused when it is larger than the bound, a link, not a regular file, or
 * someone other than root or the agent's user could have written it (trust-file-checks.ts: a key
 * anybody can add is no key), or not valid. Error messages name the path and the member, never key
 * material.
 */
export function loadKeyring(path: string): Keyring {
  let st;
  try {
    st = trustFileStat(path);
  } catch (err) {
    throw new TrustFileError(`${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (st.isFile() && st.size > MAX_TRUST_FILE_BYTES) {
    throw new TrustFileError(`${path} is ${st.size} bytes, more than ${MAX_TRUST_FILE_BYTES}`);
  }
  const problem = trustFileProblem(path, st);
  if (problem !== null) throw new TrustFileError(problem);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new TrustFileError(`${path} is not valid JSON (${(err as Error).message.slice(0, 120)})`);
  }
  try {
    return keyringOf(value, path);
  } catch (err) {
    throw new TrustFileError(`${path}: ${(err as Error).message}`);
  }
}

/** Whether the trust file is owned by root (doctor warns otherwise: the agent's user must not be able to add keys). */
export function ownedByRoot(path: string): boolean {
  return statSync(path).uid === 0;
}
