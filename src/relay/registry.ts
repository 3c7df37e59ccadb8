/**
 * The operator's registry of machines (docs/decisions/fleet-link.md, "Trust"): which machine owns which
 * TerminalId and UniQR. A machine's retained status says which identifiers it answers to, but a
 * status is the machine's own word, and any machine of the fleet could claim another's (docs/decisions/fleet-trust.md
 * item 6). So the relay routes by this file only, signed by an operator key of scope `registry`
 * (src/trust/), and treats a status that claims an identifier of another machine as an alarm.
 *
 * File (JSON, at most MAX_REGISTRY_BYTES), as `qrvend relay registry sign` writes it:
 *   { "machines": [ { "machineId": "VM-0042", "terminalId": "VM-0042", "uniQr": "QR-0042" } ],
 *     "signature": { "keyId": ..., "issuedAt": ..., "expiresAt": ..., "nonce": ..., "sig": ... } }
 * The signature covers { machines } as a statement of kind `registry`; its window is the registry's
 * validity (at most MAX_DOCUMENT_LIFETIME_MS). A newer registry replaces an older one; an older one
 * than the one loaded is refused (a file put back from a backup must not undo a reassignment).
 */
import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { TOPIC_LEVEL } from '../fleet/contract/topics.js';
import {
  MAX_DOCUMENT_LIFETIME_MS,
  signStatement,
  verifyStatement,
  type Keyring,
  type Signature,
} from '../trust/index.js';
import { KEY_ID, publicKeyFromRaw } from '../trust/keys.js';
import { machineKeyId } from '../trust/machine-key.js';
import { machineKeyring } from '../trust/machine-sig.js';

export const REGISTRY_KIND = 'registry';
export const MAX_REGISTRY_BYTES = 64 * 1024 * 1024;
const MAX_MACHINES = 1_000_000;

export const RegistryMachine = z.strictObject({
  machineId: z.string().regex(TOPIC_LEVEL, 'letters, digits and . _ : - only (1 to 128)'),
  terminalId: z.string().min(1).max(255),
  uniQr: z.string().min(1).max(255).nullable(),
  /**
   * The machine's own public keys (`qrvend fleet keygen --machine`), one, or two while it rotates:
   * what the relay believes of its status and replies is what one of these signed. Absent: nothing
   * the machine says is believed, and its Starts are answered 30 (docs/relay.md).
   */
  machineKeys: z
    .array(
      z.strictObject({
        id: z.string().regex(KEY_ID, 'letters, digits and . _ : - only, 1 to 64'),
        publicKey: z
          .string()
          .regex(/^[A-Za-z0-9+/]{43}=$/, 'the base64 of a 32-byte Ed25519 public key (44 characters)'),
      }),
    )
    .min(1)
    .max(2)
    .optional(),
});
export type RegistryMachine = z.infer<typeof RegistryMachine>;

const Unsigned = z.strictObject({ machines: z.array(RegistryMachine).max(MAX_MACHINES) });
const Signed = z.strictObject({ machines: z.array(RegistryMachine).max(MAX_MACHINES), signature: z.unknown() });

export class RegistryError extends Error {}

export interface Registry {
  readonly machines: number;
  readonly keyId: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
  /** The machineId that owns a TerminalId / UniQR, and each machine's own entry. */
  readonly byTerminalId: ReadonlyMap<string, string>;
  readonly byUniQr: ReadonlyMap<string, string>;
  readonly byMachineId: ReadonlyMap<string, RegistryMachine>;
  /** Machines listed without machineKeys (their Starts are answered 30). */
  readonly withoutKey: number;
  /** The keys a machine signs with (null: none listed); built when first asked for. */
  keysOf(machineId: string): Keyring | null;
}

/** Indexes the entries; refuses an identifier given to two machines (nobody can tell which one is meant). */
function index(
  machines: readonly RegistryMachine[],
): Pick<Registry, 'byTerminalId' | 'byUniQr' | 'byMachineId' | 'withoutKey' | 'keysOf'> {
  const byTerminalId = new Map<string, string>();
  // One key speaks for one machine: a key listed for two could make either say the other's status.
  const keyOwner = new Map<string, string>();
  let withoutKey = 0;
  const byUniQr = new Map<string, string>();
  const byMachineId = new Map<string, RegistryMachine>();
  for (const m of machines) {
    if (byMachineId.has(m.machineId)) throw new RegistryError(`the machineId ${m.machineId} is listed twice`);
    byMachineId.set(m.machineId, m);
    const owner = byTerminalId.get(m.terminalId);
    if (owner !== undefined)
      throw new RegistryError(
        `the TerminalId ${JSON.stringify(m.terminalId.slice(0, 64))} is given to ${owner} and ${m.machineId}`,
      );
    byTerminalId.set(m.terminalId, m.machineId);
    if (m.uniQr !== null) {
      const qrOwner = byUniQr.get(m.uniQr);
      if (qrOwner !== undefined)
        throw new RegistryError(
          `the UniQR ${JSON.stringify(m.uniQr.slice(0, 64))} is given to ${qrOwner} and ${m.machineId}`,
        );
      byUniQr.set(m.uniQr, m.machineId);
    }
    if (m.machineKeys === undefined) withoutKey += 1;
    const ids = new Set<string>();
    for (const k of m.machineKeys ?? []) {
      if (ids.has(k.id)) throw new RegistryError(`the machine key id ${k.id} is listed twice for ${m.machineId}`);
      ids.add(k.id);
      // The id is derived from the key (machine-key.ts), as the machine signs with it: an id that is
      // not its key's could stand for another key in the next registry (directory.ts compares keys too).
      const derived = machineKeyId(k.publicKey);
      if (k.id !== derived)
        throw new RegistryError(
          `the machine key id ${k.id} of ${m.machineId} is not its key's (${derived}): copy the entry ` +
            '`qrvend fleet keygen --machine` printed on the machine',
        );
      const owner = keyOwner.get(k.publicKey);
      if (owner !== undefined)
        throw new RegistryError(
          `one machine key is listed for ${owner} and ${m.machineId === owner ? 'again for it' : m.machineId}: each ` +
            `machine has its own`,
        );
      keyOwner.set(k.publicKey, m.machineId);
    }
  }
  const built = new Map<string, Keyring>();
  const keysOf = (machineId: string): Keyring | null => {
    const entry = byMachineId.get(machineId);
    if (entry?.machineKeys === undefined) return null;
    let ring = built.get(machineId);
    if (ring === undefined) {
      try {
        ring = machineKeyring(entry.machineKeys.map((k) => ({ id: k.id, key: publicKeyFromRaw(k.publicKey) })));
      } catch {
        ring = machineKeyring([]); // not a usable Ed25519 key: as good as none
      }
      built.set(machineId, ring);
    }
    return ring;
  };
  return { byTerminalId, byUniQr, byMachineId, withoutKey, keysOf };
}

function readJson(file: string): unknown {
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw new RegistryError(`${file} is not a regular file`);
    size = st.size;
  } catch (err) {
    if (err instanceof RegistryError) throw err;
    throw new RegistryError(`${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (size > MAX_REGISTRY_BYTES) throw new RegistryError(`${file} is ${size} bytes, more than ${MAX_REGISTRY_BYTES}`);
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new RegistryError(`${file} is not valid JSON (${(err as Error).message.slice(0, 120)})`);
  }
}

function schemaProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`;
}

/** Reads and verifies a signed registry against the operator keys (scope `registry`). */
export function loadRegistry(file: string, keyring: Keyring, nowMs: number): Registry {
  const parsed = Signed.safeParse(readJson(file));
  if (!parsed.success) throw new RegistryError(`${file}: ${schemaProblem(parsed.error)}`);
  const { machines, signature } = parsed.data;
  const checked = verifyStatement({
    kind: REGISTRY_KIND,
    body: { machines },
    signature,
    scope: 'registry',
    keyring,
    nowMs,
    maxLifetimeMs: MAX_DOCUMENT_LIFETIME_MS,
  });
  if (!checked.ok || checked.signature === undefined) {
    throw new RegistryError(
      `${file}: the signature is not accepted (${checked.ok ? 'malformed' : checked.reason}: ` +
        `${checked.ok ? '' : checked.message}); sign it again with \`qrvend relay registry sign\``,
    );
  }
  try {
    return {
      machines: machines.length,
      keyId: checked.keyId,
      issuedAt: checked.signature.issuedAt,
      expiresAt: checked.signature.expiresAt,
      ...index(machines),
    };
  } catch (err) {
    throw new RegistryError(`${file}: ${(err as Error).message}`);
  }
}

export interface SignRegistryOptions {
  keyId: string;
  key: Parameters<typeof signStatement>[2]['key'];
  nowMs: number;
  lifetimeMs: number;
}

/** Signs an unsigned registry (`{ "machines": [...] }`, a signature in it is replaced); checks it first. */
export function signRegistry(
  value: unknown,
  options: SignRegistryOptions,
): { machines: RegistryMachine[]; signature: Signature } {
  const source =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? { machines: (value as { machines?: unknown }).machines }
      : value;
  const parsed = Unsigned.safeParse(source);
  if (!parsed.success) throw new RegistryError(schemaProblem(parsed.error));
  index(parsed.data.machines);
  const signature = signStatement(
    REGISTRY_KIND,
    { machines: parsed.data.machines },
    {
      keyId: options.keyId,
      key: options.key,
      nowMs: options.nowMs,
      lifetimeMs: options.lifetimeMs,
      maxLifetimeMs: MAX_DOCUMENT_LIFETIME_MS,
    },
  );
  return { machines: parsed.data.machines, signature };
}
