/**
 * `qrvend relay registry sign`: the operator signs the registry of machines, off the relay; and
 * `qrvend relay registry step-back`: the operator takes an older registry on purpose (docs/relay.md).
 */
import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../core/durable-file.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { KEY_ID, loadKeyring, loadPrivateKey, TrustFileError } from '../trust/keys.js';
import { loadRelayConfig } from './config.js';
import { loadRegistry, RegistryError, signRegistry } from './registry.js';
import { registryFloor } from './registry-watch.js';

export interface SignRegistryFileOptions {
  input: string;
  output: string;
  keyFile: string;
  keyId: string;
  days: string;
}

export function signRegistryFile(o: SignRegistryFileOptions): void {
  const usage = (message: string, hint: string) => new QrvendError(ErrorCodes.CLI_USAGE, message, { hint });
  const days = Number(o.days);
  if (!Number.isInteger(days) || days < 1 || days > 400)
    throw usage(`--days ${o.days.slice(0, 20)}: a whole number of days from 1 to 400`, 'for example --days 365');
  if (!KEY_ID.test(o.keyId))
    throw usage(
      '--key-id: letters, digits and . _ : - only, 1 to 64',
      "the key's id as written in the relay's trust file",
    );
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(o.input, 'utf8'));
  } catch (err) {
    throw usage(
      `${o.input} cannot be read as JSON ` +
        `(${(err as NodeJS.ErrnoException).code ?? (err as Error).message.slice(0, 120)})`,
      'the registry is {"machines":[{"machineId":"VM-0042","terminalId":"VM-0042","uniQr":"QR-0042"}]}',
    );
  }
  let key;
  try {
    key = loadPrivateKey(o.keyFile);
  } catch (err) {
    throw usage(
      err instanceof TrustFileError ? err.message : 'the key cannot be read',
      'an Ed25519 private key made by qrvend fleet keygen',
    );
  }
  let signed;
  try {
    signed = signRegistry(value, { keyId: o.keyId, key, nowMs: Date.now(), lifetimeMs: days * 24 * 3600_000 });
  } catch (err) {
    throw usage(
      `${o.input}: ${err instanceof RegistryError ? err.message : String(err)}`,
      'each machineId, TerminalId and UniQR once',
    );
  }
  writeFileAtomic(o.output, `${JSON.stringify(signed, null, 1)}\n`, 0o644);
  process.stdout.write(
    `signed ${signed.machines.length} machines with ${o.keyId}, valid until ` +
      `${new Date(signed.signature.expiresAt).toISOString()}: ${o.output}\n`,
  );
}

/**
 * Makes the registry now in relay.registryFile the newest this relay accepts (relay.stateDir),
 * older or not, once it verifies: the one way back to an older registry (docs/security.md,
 * "Versions kept across restarts"). The relay takes it at its next reload or start.
 */
export function stepBackRegistry(configFile: string, nowMs = Date.now()): void {
  const config = loadRelayConfig(configFile);
  let registry;
  try {
    registry = loadRegistry(config.registryFile, loadKeyring(config.trustFile), nowMs);
  } catch (err) {
    const why = err instanceof RegistryError || err instanceof TrustFileError ? err.message : String(err);
    throw new QrvendError(ErrorCodes.CONFIG_INVALID, `nothing stepped back: ${why}`, {
      hint: 'the registry to go back to must verify: put the signed file at relay.registryFile first',
      details: { registryFile: config.registryFile },
    });
  }
  const floor = registryFloor(config.stateDir);
  const { from } = floor.stepBack(registry.issuedAt, undefined, nowMs);
  const at = (v: number) => new Date(v).toISOString();
  process.stdout.write(
    `the newest registry this relay accepts is now the one signed at ${at(registry.issuedAt)} ` +
      `(${registry.machines} machines, ${config.registryFile})` +
      `${from === null ? '' : `; it was the one signed at ${at(from)}`}. ` +
      `Reload the relay to take it: systemctl reload qrvend-relay\n`,
  );
}
