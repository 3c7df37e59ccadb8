/**
 * The integrators' SecretTokens, held by the relay (docs/decisions/fleet-link.md, "Trust": the token is
 * checked at the relay and never crosses the broker). One file per integrator, named in
 * relay.integrators, read with the machine's own reader (permissions, exactly 64 printable
 * characters) and compared in constant time with the machine's own matcher.
 *
 * Integrator name and token are judged together, with the same work whichever is wrong (an
 * unknown name is compared against a random token), so an answer says nothing about which one was.
 */
import { randomBytes } from 'node:crypto';
import { isQrvendError, QrvendError } from '../core/errors.js';
import { createSecretMatcher, type SecretMatcher } from '../start/secret-compare.js';
import { readSecretToken } from '../start/secret-file.js';
import type { RelayConfig } from './config.js';

export interface IntegratorTokens {
  /** True when `integratorName` is one of the relay's and `presented` is its token. */
  authenticates(integratorName: string, presented: string): boolean;
  readonly names: readonly string[];
}

export function loadIntegratorTokens(integrators: RelayConfig['integrators']): IntegratorTokens {
  const matchers = new Map<string, SecretMatcher>();
  integrators.forEach(({ name, secretTokenFile }, i) => {
    let token: Buffer;
    try {
      token = readSecretToken(secretTokenFile);
    } catch (err) {
      // The machine's reader names the machine's key; here it is the relay's.
      if (!isQrvendError(err)) throw err;
      throw new QrvendError(err.code, err.message, {
        hint:
          `check relay.integrators[${i}].secretTokenFile (${name}): the file holds the integrator's 64-character ` +
          `token alone, mode 0640 or stricter`,
        details: { file: secretTokenFile },
      });
    }
    matchers.set(name, createSecretMatcher(token));
  });
  const nobody = createSecretMatcher(randomBytes(48));
  return {
    names: [...matchers.keys()],
    authenticates(integratorName, presented) {
      const matcher = matchers.get(integratorName);
      const tokenOk = (matcher ?? nobody).matches(presented);
      return matcher !== undefined && tokenOk;
    },
  };
}
