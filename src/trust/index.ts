/** Operator keys, signed statements and their nonces (docs/decisions/fleet-link.md, "Trust"). */
export { canonicalJson, signedBytes, CanonicalError, SIGNED_DOMAIN } from './canonical.js';
export {
  SCOPES,
  type Scope,
  type Keyring,
  type TrustedKey,
  TrustFileError,
  keyringOf,
  loadKeyring,
  ownedByRoot,
  generateSigningKey,
  loadPrivateKey,
  publicKeyFromRaw,
  rawPublicKey,
} from './keys.js';
export {
  CLOCK_SKEW_MS,
  MAX_LIFETIME_MS,
  DEFAULT_LIFETIME_MS,
  MAX_DOCUMENT_LIFETIME_MS,
  SignatureSchema,
  type Signature,
  type Refusal,
  type Checked,
  newNonce,
  type Prechecked,
  signStatement,
  verifyStatement,
  precheckStatement,
  verifyPrechecked,
  checkWindow,
} from './signed.js';
export { NonceBook, MAX_NONCES, type NonceVerdict } from './nonce-book.js';
export { VersionFloor, DOCUMENT_NAME, type FloorRecord, type VersionFloorOptions } from './version-floor.js';
