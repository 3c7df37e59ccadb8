/**
 * Signed statements (docs/decisions/fleet-link.md, "Trust"): a statement of some kind (a command for one
 * machine, a relay's voucher for a Start, the operator's registry of machines), its time window
 * and a nonce, signed with an Ed25519 key from a keyring. This file checks the signature, the key's
 * scope and the window; what a nonce seen before means is the caller's (see nonce-book.ts).
 *
 * Pure but for the signature arithmetic: the time comes in as an argument.
 */
import { randomBytes, sign as edSign, verify as edVerify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { CanonicalError, signedBytes } from './canonical.js';
import { KEY_ID, type Keyring, type Scope } from './keys.js';
import { formatFor, formatProblem, type SignatureFormat } from './signature-format.js';

/** Clocks of machines and operators disagree by this much at most before a statement is refused. */
export const CLOCK_SKEW_MS = 30_000;
/** A statement valid for longer is refused: nonces are kept only for the window, and a short one bounds a replay. */
export const MAX_LIFETIME_MS = 15 * 60_000;
/** The lifetime `qrvend fleet cmd` gives a command unless told otherwise. */
export const DEFAULT_LIFETIME_MS = 60_000;
/**
 * A document the operator signs once and installs for months (the relay's registry of machines)
 * is not a command: no nonce book keeps it, a newer one replaces it. Its signer and verifier pass
 * this as `maxLifetimeMs`; commands and vouchers keep MAX_LIFETIME_MS.
 */
export const MAX_DOCUMENT_LIFETIME_MS = 400 * 24 * 3600_000;

export const SignatureSchema = z.strictObject({
  keyId: z.string().regex(KEY_ID),
  /** Epoch milliseconds, the signer's clock. */
  issuedAt: z.number().int().positive(),
  expiresAt: z.number().int().positive(),
  /** At least 128 random bits, base64url. */
  nonce: z.string().regex(/^[A-Za-z0-9_-]{22,64}$/),
  /** The Ed25519 signature, base64 (64 bytes). */
  sig: z.string().regex(/^[A-Za-z0-9+/]{86}==$/),
  /** 2: the signed bytes name keyId (signature-format.ts); absent: format 1. */
  format: z.literal(2).optional(),
});
export type Signature = z.infer<typeof SignatureSchema>;

export type Refusal =
  | 'unsigned'
  | 'malformed'
  | 'unknown-key'
  | 'scope'
  | 'bad-signature'
  | 'expired'
  | 'not-yet-valid'
  | 'too-long'
  | 'replayed'
  | 'clock-unsynced'
  | 'no-keys'
  /** Format 1 on a kind that requires format 2 (signature-format.ts). */
  | 'old-format';

export type Checked = { ok: true; keyId: string } | { ok: false; reason: Refusal; message: string };

const refuse = (reason: Refusal, message: string): Extract<Checked, { ok: false }> => ({ ok: false, reason, message });

/** A fresh nonce: 16 random bytes, base64url. */
export function newNonce(): string {
  return randomBytes(16).toString('base64url');
}

/** The statement with its window and nonce, as it is signed. */
function statementOf(
  body: Record<string, unknown>,
  signature: Pick<Signature, 'issuedAt' | 'expiresAt' | 'nonce'>,
): Record<string, unknown> {
  return { ...body, issuedAt: signature.issuedAt, expiresAt: signature.expiresAt, nonce: signature.nonce };
}

export interface SignOptions {
  keyId: string;
  key: KeyObject;
  nowMs: number;
  lifetimeMs?: number;
  /** The longest lifetime allowed for this kind of statement (default MAX_LIFETIME_MS). */
  maxLifetimeMs?: number;
  nonce?: string;
  /** Default: the kind's own (signature-format.ts); 1 only for a receiver of an older release. */
  format?: SignatureFormat;
}

/** The bytes of a signature in its format (a format-2 signature names its key). */
function bytesOf(
  kind: string,
  body: Record<string, unknown>,
  signature: Pick<Signature, 'keyId' | 'issuedAt' | 'expiresAt' | 'nonce' | 'format'>,
): Buffer {
  return signedBytes(kind, statementOf(body, signature), signature.format === 2 ? signature.keyId : undefined);
}

/** Signs `body` (which must not itself carry issuedAt, expiresAt or nonce) as a statement of `kind`. */
export function signStatement(kind: string, body: Record<string, unknown>, options: SignOptions): Signature {
  const lifetime = options.lifetimeMs ?? DEFAULT_LIFETIME_MS;
  const max = options.maxLifetimeMs ?? MAX_LIFETIME_MS;
  if (!(lifetime > 0 && lifetime <= max)) throw new RangeError(`a lifetime between 1 ms and ${max} ms`);
  const window = {
    issuedAt: Math.floor(options.nowMs),
    expiresAt: Math.floor(options.nowMs + lifetime),
    nonce: options.nonce ?? newNonce(),
  };
  const format = options.format ?? formatFor(kind);
  const unsigned = { keyId: options.keyId, ...window, ...(format === 2 ? { format: 2 as const } : {}) };
  const sig = edSign(null, bytesOf(kind, body, unsigned), options.key).toString('base64');
  return { ...unsigned, sig };
}

/** Whether `now` lies in the signature's window (with the skew either way) and the window is not too long. */
export function checkWindow(
  signature: Pick<Signature, 'issuedAt' | 'expiresAt'>,
  nowMs: number,
  maxLifetimeMs = MAX_LIFETIME_MS,
): Extract<Checked, { ok: false }> | null {
  if (signature.expiresAt <= signature.issuedAt) return refuse('malformed', 'expiresAt is not after issuedAt');
  if (signature.expiresAt - signature.issuedAt > maxLifetimeMs) {
    return refuse(
      'too-long',
      `valid for ${Math.round((signature.expiresAt - signature.issuedAt) / 1000)} ` +
        `s, more than the ${maxLifetimeMs / 1000} s allowed`,
    );
  }
  if (nowMs < signature.issuedAt - CLOCK_SKEW_MS) {
    return refuse(
      'not-yet-valid',
      `issued ${Math.round((signature.issuedAt - nowMs) / 1000)} s in this machine's future (check both clocks)`,
    );
  }
  if (nowMs > signature.expiresAt + CLOCK_SKEW_MS) {
    return refuse('expired', `expired ${Math.round((nowMs - signature.expiresAt) / 1000)} s ago`);
  }
  return null;
}

export interface VerifyInput {
  kind: string;
  body: Record<string, unknown>;
  /** As received: checked against SignatureSchema here. Absent = unsigned. */
  signature: unknown;
  scope: Scope;
  keyring: Keyring | null;
  nowMs: number;
  /** The longest lifetime allowed for this kind of statement (default MAX_LIFETIME_MS). */
  maxLifetimeMs?: number;
}

export type Prechecked =
  { ok: true; signature: Signature; key: KeyObject } | { ok: false; reason: Refusal; message: string };

/**
 * The checks that cost no signature arithmetic, in this order: a keyring with at least one key, a
 * signature at all, its shape, the key, the key's scope, the window. A receiver that bounds its
 * Ed25519 work (a flood of forged statements) runs these first, unbounded: they refuse an
 * unsigned, unknown-key or stale flood for the price of a map lookup.
 */
export function precheckStatement(input: Omit<VerifyInput, 'kind' | 'body'>): Prechecked {
  if (input.keyring === null || input.keyring.byId.size === 0)
    return refuse(
      'no-keys',
      'no operator key is configured on this machine (fleet.trustFile): nothing that needs a signature runs',
    );
  if (input.signature === undefined || input.signature === null)
    return refuse('unsigned', `unsigned; this needs a signature by a key with the scope ${input.scope}`);
  const parsed = SignatureSchema.safeParse(input.signature);
  if (!parsed.success)
    return refuse('malformed', `signature.${parsed.error.issues[0]?.path.join('.') || ''} is malformed`);
  const signature = parsed.data;
  const key = input.keyring.byId.get(signature.keyId);
  if (key === undefined) return refuse('unknown-key', `the key ${signature.keyId} is not trusted here`);
  if (!key.scopes.has(input.scope))
    return refuse('scope', `the key ${signature.keyId} may not sign for the scope ${input.scope}`);
  const window = checkWindow(signature, input.nowMs, input.maxLifetimeMs);
  if (window !== null) return window;
  return { ok: true, signature, key: key.key };
}

/**
 * Checks, in this order: a keyring with at least one key, a signature at all, its shape, the key,
 * the key's scope, the window (precheckStatement), the signature over exactly this kind and body.
 * A nonce is checked by the caller after this passes (a forged statement must not burn a nonce).
 */
export function verifyStatement(input: VerifyInput): Checked & { signature?: Signature } {
  const pre = precheckStatement(input);
  if (!pre.ok) return pre;
  return verifyPrechecked(input, pre);
}

/** The signature arithmetic, after precheckStatement passed. */
export function verifyPrechecked(
  input: Pick<VerifyInput, 'kind' | 'body'>,
  pre: Extract<Prechecked, { ok: true }>,
): Checked & { signature?: Signature } {
  const { signature, key } = pre;
  const oldFormat = formatProblem(input.kind, signature);
  if (oldFormat !== null) return refuse('old-format', oldFormat);
  let bytes: Buffer;
  try {
    bytes = bytesOf(input.kind, input.body, signature);
  } catch (err) {
    return refuse('malformed', err instanceof CanonicalError ? `cannot be signed: ${err.message}` : 'cannot be signed');
  }
  if (!edVerify(null, bytes, key, Buffer.from(signature.sig, 'base64'))) {
    return refuse(
      'bad-signature',
      `the signature by ${signature.keyId} does not match this ` +
        `${input.kind} (another machine, command or arguments, or altered)`,
    );
  }
  return { ok: true, keyId: signature.keyId, signature };
}
