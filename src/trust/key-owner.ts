/**
 * The name of a public key that no trust file can change: the SHA-256 of its 32 raw bytes,
 * base64url (43 characters). A trust file's id is only the site's label for a key, so what is kept
 * per key (seen nonces, budgets; docs/security.md, "Budgets and nonce shares per key") is kept
 * under this name: renaming a key, or listing it under a second id, makes no new record.
 */
import { createHash, type KeyObject } from 'node:crypto';

const cache = new WeakMap<KeyObject, string>();

/** The fingerprint of an Ed25519 public key (cached per key object). */
export function keyFingerprint(key: KeyObject): string {
  const known = cache.get(key);
  if (known !== undefined) return known;
  const jwk = key.export({ format: 'jwk' });
  if (jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new TypeError('not an Ed25519 public key');
  const fingerprint = createHash('sha256').update(Buffer.from(jwk.x, 'base64url')).digest('base64url');
  cache.set(key, fingerprint);
  return fingerprint;
}

/**
 * The first public key (base64 of its raw bytes, as files spell it) given under two ids, with
 * both ids, or null. A key listed twice would be two keys to every per-key record and bound.
 */
export function publicKeyListedTwice(
  entries: ReadonlyArray<{ id: string; publicKey: string }>,
): { ids: [string, string] } | null {
  const byKey = new Map<string, string>();
  for (const entry of entries) {
    const raw = Buffer.from(entry.publicKey, 'base64').toString('base64');
    const first = byKey.get(raw);
    if (first !== undefined) return { ids: [first, entry.id] };
    byKey.set(raw, entry.id);
  }
  return null;
}
