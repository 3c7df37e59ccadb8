/**
 * Constant-time comparison of a presented SecretToken with the configured one.
 *
 * `timingSafeEqual` alone needs equal lengths, and an early length check would tell an attacker
 * the token's length by timing. So both sides are first reduced to an HMAC under a key drawn
 * once per process: the digests always have the same length, the comparison always touches all
 * of them, and the configured token is never held in a form an attacker's input is compared
 * against byte by byte. The HMAC of the presented value takes time proportional to its length,
 * which says nothing about the secret (and the body size limit bounds it).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface SecretMatcher {
  /** True when `presented` (any length, any content) equals the configured token. */
  matches(presented: string): boolean;
}

export function createSecretMatcher(secret: Buffer): SecretMatcher {
  const key = randomBytes(32);
  const digest = (value: Buffer): Buffer => createHmac('sha256', key).update(value).digest();
  const expected = digest(secret);
  return {
    matches(presented: string): boolean {
      return timingSafeEqual(digest(Buffer.from(presented, 'utf8')), expected);
    },
  };
}
