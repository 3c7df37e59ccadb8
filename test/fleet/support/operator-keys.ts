/**
 * Operator keys for tests: Ed25519 key pairs with scopes, the machines' trust file that lists their
 * public halves (mode 0644, as loadKeyring wants it), and a signer for `fleet cmd`-style requests.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rawPublicKey, type Scope } from '../../../src/trust/keys.js';
import { signStatement, type Signature } from '../../../src/trust/signed.js';
import { COMMAND_STATEMENT_KIND, commandStatement } from '../../../src/fleet/contract/scopes.js';
import type { CommandSigner } from '../../../src/fleet/operator/command.js';

export interface TestKey extends CommandSigner {
  publicKey: KeyObject;
  scopes: Scope[];
  /** The PEM of the private key (for the CLI's --sign-key file). */
  privatePem: string;
}

export function testKey(keyId: string, scopes: Scope[]): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    keyId,
    key: privateKey,
    publicKey,
    scopes,
    privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
}

/** The usual operator: every scope an operator signs commands with. */
export const OPERATOR_SCOPES: Scope[] = ['read', 'operate', 'configure'];

/** Writes the trust file listing `keys` into `dir`; returns its path. */
export function writeTrustFile(dir: string, keys: TestKey[], name = 'fleet-trust.json'): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({
      keys: keys.map((k) => ({ id: k.keyId, publicKey: rawPublicKey(k.publicKey), scopes: k.scopes })),
    }),
    { mode: 0o644 },
  );
  return file;
}

/** A command's signature as `qrvend fleet cmd --sign-key` makes it. */
export function signCommand(
  key: CommandSigner,
  machineId: string,
  name: string,
  args: unknown,
  nowMs = Date.now(),
  lifetimeMs = 60_000,
): Signature {
  return signStatement(COMMAND_STATEMENT_KIND, commandStatement(machineId, name, args), {
    keyId: key.keyId,
    key: key.key,
    nowMs,
    lifetimeMs,
  });
}
