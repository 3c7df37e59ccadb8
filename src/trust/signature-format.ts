/**
 * Which signature format a kind of statement is signed in (docs/security.md, "What a command's
 * signature covers").
 *
 * Format 2 (`"format": 2` in the signature; canonical.ts's SIGNED_DOMAIN_KEY_BOUND) names the
 * signing key's id in the signed bytes. The key id, and not the public key's fingerprint, because
 * Ed25519 already binds the public key (the verification hashes it with the message); what it
 * leaves unbound is the trust file's name for the key, which carries the scopes and under which a
 * receiver used to keep its records. With the id signed, a signature verifies under the one entry
 * it was made for, whatever another entry or a renamed one says.
 *
 * Commands are signed and required in format 2: they are what a machine keeps nonces of and
 * budgets per key. The other kinds (a relay's Start voucher, the registry, an update manifest) stay
 * in format 1, which both older and newer receivers verify: a release must take a manifest signed
 * by the next one, and a relay and its machines are upgraded at different times. A receiver takes
 * format 2 for them too.
 */
export type SignatureFormat = 1 | 2;

/** Kinds signed in format 2 and refused in format 1. */
export const KEY_BOUND_KINDS: ReadonlySet<string> = new Set(['command']);

/** The format a statement of `kind` is signed in by default. */
export function formatFor(kind: string): SignatureFormat {
  return KEY_BOUND_KINDS.has(kind) ? 2 : 1;
}

/** The refusal of a format-1 signature on a kind that requires format 2 (free: no signature arithmetic), or null. */
export function formatProblem(kind: string, signature: { format?: number | undefined }): string | null {
  if (!KEY_BOUND_KINDS.has(kind) || signature.format === 2) return null;
  return (
    'signed in format 1, whose bytes do not name the key that signed (an older qrvend signed it): ' +
    `sign the ${kind} again with this release's qrvend fleet cmd`
  );
}
