/**
 * Ed25519 key material: reading a private key file, making a key pair, and the raw public key's
 * base64 spelling used by the trust file and the registry. Kept apart from keys.ts (the trust
 * file's schema) so that the main thread, which loads the machine's own key at start
 * (machine-key.ts), does not load zod (docs/architecture.md, threads).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

export class TrustFileError extends Error {}

/** The Ed25519 public key object for 32 raw bytes given as base64. */
export function publicKeyFromRaw(base64: string): KeyObject {
  const raw = Buffer.from(base64, 'base64');
  if (raw.length !== 32) throw new TrustFileError('an Ed25519 public key is 32 bytes');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
}

/** The 32 raw bytes of an Ed25519 public key, as base64 (the trust file's spelling). */
export function rawPublicKey(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new TrustFileError('not an Ed25519 key');
  return Buffer.from(jwk.x, 'base64url').toString('base64');
}

export interface GeneratedKey {
  /** PKCS#8 PEM: the secret; write it 0600 and keep it off the machines. */
  privatePem: string;
  /** base64 of the raw 32-byte public key: goes into the machines' trust file. */
  publicKey: string;
}

export function generateSigningKey(): GeneratedKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKey: rawPublicKey(publicKey),
  };
}

/** Reads an Ed25519 private key (PKCS#8 PEM). The error never quotes the file. */
export function loadPrivateKey(path: string): KeyObject {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new TrustFileError(
      `the private key ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch {
    throw new TrustFileError(`${path} is not a PEM private key`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new TrustFileError(`${path} is not an Ed25519 key`);
  return key;
}
