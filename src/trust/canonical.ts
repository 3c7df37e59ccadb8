/**
 * The exact bytes a signature covers. JSON has many spellings of one value (key order, spaces,
 * `1.0` and `1`), so signer and verifier each rebuild one spelling from the parsed value: object
 * keys sorted by UTF-16 code units, no whitespace, strings and numbers as JSON.stringify writes
 * them. The bytes start with a domain tag and the statement's kind, so a signature over one kind
 * of statement (a command) can never be presented as another (a relay's Start voucher, a registry).
 */
export const SIGNED_DOMAIN = 'qrvend-signed-v1';
/**
 * Signature format 2 (docs/security.md, "What a command's signature covers"): the bytes also name
 * the id of the key that signed, so a signature verifies only under the trust-file entry (and so the
 * scopes) it was made for.
 */
export const SIGNED_DOMAIN_KEY_BOUND = 'qrvend-signed-v2';

/** Nesting deeper than this is not a command anyone writes; refusing it bounds the recursion. */
const MAX_DEPTH = 32;

export class CanonicalError extends Error {}

function write(value: unknown, depth: number, out: string[]): void {
  if (depth > MAX_DEPTH) throw new CanonicalError(`nested deeper than ${MAX_DEPTH} levels`);
  if (value === null || typeof value === 'boolean' || typeof value === 'string') {
    out.push(JSON.stringify(value));
    return;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new CanonicalError('a number that is not finite');
    out.push(JSON.stringify(value));
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    value.forEach((item, i) => {
      if (i > 0) out.push(',');
      write(item, depth + 1, out);
    });
    out.push(']');
    return;
  }
  if (typeof value === 'object') {
    const keys = Object.keys(value as object).sort();
    out.push('{');
    keys.forEach((key, i) => {
      const item = (value as Record<string, unknown>)[key];
      if (item === undefined) throw new CanonicalError(`member ${JSON.stringify(key)} is undefined`);
      if (i > 0) out.push(',');
      out.push(JSON.stringify(key), ':');
      write(item, depth + 1, out);
    });
    out.push('}');
    return;
  }
  throw new CanonicalError(`a value of type ${typeof value}`);
}

/** One spelling of a JSON value; throws CanonicalError for what JSON cannot carry. */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  write(value, 0, out);
  return out.join('');
}

/**
 * The bytes signed for a statement of `kind` (`command`, `start-voucher`, `registry`, ...); with
 * `keyId`, format 2, whose bytes name the signing key's id too (a key id has no newline: KEY_ID).
 */
export function signedBytes(kind: string, statement: unknown, keyId?: string): Buffer {
  if (keyId === undefined) return Buffer.from(`${SIGNED_DOMAIN}\n${kind}\n${canonicalJson(statement)}`, 'utf8');
  return Buffer.from(`${SIGNED_DOMAIN_KEY_BOUND}\n${kind}\n${keyId}\n${canonicalJson(statement)}`, 'utf8');
}
