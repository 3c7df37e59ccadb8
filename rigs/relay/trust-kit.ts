/**
 * The keys and files a relayed Start needs, made for tests, the benchmark and simulations
 * (docs/relay.md, "Trust"): an operator key of scope `registry` and the relay's trust file holding
 * it, the registry of machines signed with it, the relay's own voucher key and the machines' trust
 * file holding its public key with the scope `start`, an integrator's SecretToken file, and each
 * registered machine's own key (its public half in the registry's machineKeys, unless the machine
 * is named in `keyless`). Written into a temporary directory with the modes the loaders require;
 * remove() deletes it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPrivateKey } from 'node:crypto';
import { generateSigningKey, keyringOf, loadPrivateKey, type Keyring } from '../../src/trust/index.js';
import { generateMachineKey } from '../../src/trust/machine-key.js';
import { MachineSigner } from '../../src/trust/machine-sig.js';
import { signRegistry, type RegistryMachine } from '../../src/relay/registry.js';
import { voucherSignerOf, type VoucherSigner } from '../../src/relay/voucher.js';

export interface TrustKit {
  readonly dir: string;
  /** The integrator's SecretToken as the relay holds it (writeToken() replaces it). */
  readonly token: string;
  writeToken(token: string): void;
  readonly integratorName: string;
  /** The machines' trust file (fleet.trustFile): the relay's key, scope `start`. */
  readonly machineTrustFile: string;
  readonly machineKeyring: Keyring;
  /** The relay's keys, as the relay signs (for tests that act as the relay). */
  readonly signer: VoucherSigner;
  /** relay.registryFile, relay.trustFile, relay.stateDir, relay.voucherKey, relay.integrators. */
  relayConfig(): {
    registryFile: string;
    trustFile: string;
    stateDir: string;
    voucherKey: { file: string; keyId: string };
    integrators: Array<{ name: string; secretTokenFile: string }>;
  };
  /** Signs and writes the registry (replacing the file atomically enough for a test: one write). */
  writeRegistry(
    machines: readonly RegistryMachine[],
    options?: { nowMs?: number; lifetimeMs?: number; keyless?: readonly string[] },
  ): void;
  /** The machine's own key as a file (fleet.machineKeyFile: mode 0600, owned by this process's user). */
  machineKeyFile(machineId: string): string;
  /** A signer with the machine's own key, as a new agent start would have (a fresh boot id). */
  machineSigner(machineId: string): MachineSigner;
  /** The registry entry part for the machine's key (its machineKeys item). */
  machineKeyEntry(machineId: string): { id: string; publicKey: string };
  remove(): void;
}

export function createTrustKit(options: {
  machines: readonly RegistryMachine[];
  token?: string;
  integratorName?: string;
  keyless?: readonly string[];
}): TrustKit {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-trust-'));
  const token = options.token ?? randomBytes(32).toString('hex');
  const integratorName = options.integratorName ?? 'acme-wallet';
  const operator = generateSigningKey();
  const relayKey = generateSigningKey();
  const file = (name: string, text: string, mode: number) => {
    const path = join(dir, name);
    writeFileSync(path, text, { mode });
    return path;
  };
  const operatorKeyFile = file('operator.pem', operator.privatePem, 0o600);
  const relayKeyFile = file('relay-voucher.pem', relayKey.privatePem, 0o600);
  const machineTrust = { keys: [{ id: 'relay-1', publicKey: relayKey.publicKey, scopes: ['start'] }] };
  const machineTrustFile = file('machine-trust.json', JSON.stringify(machineTrust), 0o644);
  const relayTrustFile = file(
    'relay-trust.json',
    JSON.stringify({ keys: [{ id: 'ops-registry', publicKey: operator.publicKey, scopes: ['registry'] }] }),
    0o644,
  );
  const tokenFile = file('integrator.token', `${token}\n`, 0o600);
  const registryFile = join(dir, 'registry.signed.json');
  const operatorKey = loadPrivateKey(operatorKeyFile);
  const machineKeys = new Map<string, ReturnType<typeof generateMachineKey>>();
  const machineKey = (machineId: string) => {
    let made = machineKeys.get(machineId);
    if (made === undefined) machineKeys.set(machineId, (made = generateMachineKey()));
    return made;
  };
  const writeRegistry: TrustKit['writeRegistry'] = (given, o = {}) => {
    const keyless = new Set(o.keyless ?? options.keyless ?? []);
    const machines = given.map((m) =>
      m.machineKeys !== undefined || keyless.has(m.machineId)
        ? m
        : { ...m, machineKeys: [machineKey(m.machineId).entry] },
    );
    const signed = signRegistry(
      { machines },
      {
        keyId: 'ops-registry',
        key: operatorKey,
        nowMs: o.nowMs ?? Date.now(),
        lifetimeMs: o.lifetimeMs ?? 24 * 3600_000,
      },
    );
    writeFileSync(registryFile, JSON.stringify(signed), { mode: 0o644 });
  };
  writeRegistry(options.machines);
  let current = token;
  return {
    dir,
    get token() {
      return current;
    },
    writeToken(next: string) {
      current = next;
      writeFileSync(tokenFile, `${next}\n`, { mode: 0o600 });
    },
    integratorName,
    machineTrustFile,
    machineKeyring: keyringOf(machineTrust, machineTrustFile),
    signer: voucherSignerOf('relay-1', loadPrivateKey(relayKeyFile)),
    relayConfig: () => ({
      registryFile,
      trustFile: relayTrustFile,
      stateDir: join(dir, 'relay-state'),
      voucherKey: { file: relayKeyFile, keyId: 'relay-1' },
      integrators: [{ name: integratorName, secretTokenFile: tokenFile }],
    }),
    writeRegistry,
    machineKeyFile: (machineId) => file(`machine-${machineId}.pem`, machineKey(machineId).privatePem, 0o600),
    machineSigner: (machineId) => {
      const made = machineKey(machineId);
      return new MachineSigner(machineId, made.entry.id, createPrivateKey(made.privatePem));
    },
    machineKeyEntry: (machineId) => machineKey(machineId).entry,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
