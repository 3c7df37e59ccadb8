/**
 * The operator's registry of machines (design section 10, "Trust"): which machine owns which
 * TerminalId and UniQR. A machine's retained status says which identifiers it answers to, but a
 * status is the machine's own word, and any machine of the fleet could claim another's (issue 31
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
import { MAX_DOCUMENT_LIFETIME_MS, signStatement, verifyStatement, type Keyring, type Signature } from '../trust/index.js';

export const REGISTRY_KIND = 'registry';
export const MAX_REGISTRY_BYTES = 64 * 1024 * 1024;
const MAX_MACHINES = 1_000_000;

export const RegistryMachine = z.strictObject({
  machineId: z.string().regex(TOPIC_LEVEL, 'letters, digits and . _ : - only (1 to 128)'),
  terminalId: z.string().min(1).max(255),
  uniQr: z.string().min(1).max(255).nullable(),
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
}

/** Indexes the entries; refuses an identifier given to two machines (nobody can tell which one is meant). */
function index(machines: readonly RegistryMachine[]): Pick<Registry, 'byTerminalId' | 'byUniQr' | 'byMachineId'> {
  const byTerminalId = new Map<string, string>();
  const byUniQr = new Map<string, string>();
  const byMachineId = new Map<string, RegistryMachine>();
  for (const m of machines) {
    if (byMachineId.has(m.machineId)) throw new RegistryError(`the machineId ${m.machineId} is listed twice`);
    byMachineId.set(m.machineId, m);
    const owner = byTerminalId.get(m.terminalId);
    if (owner !== undefined) throw new RegistryError(`the TerminalId ${JSON.stringify(m.terminalId.slice(0, 64))} is given to ${owner} and ${m.machineId}`);
    byTerminalId.set(m.terminalId, m.machineId);
    if (m.uniQr !== null) {
      const qrOwner = byUniQr.get(m.uniQr);
      if (qrOwner !== undefined) throw new RegistryError(`the UniQR ${JSON.stringify(m.uniQr.slice(0, 64))} is given to ${qrOwner} and ${m.machineId}`);
      byUniQr.set(m.uniQr, m.machineId);
    }
  }
  return { byTerminalId, byUniQr, byMachineId };
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
  const checked = verifyStatement({ kind: REGISTRY_KIND, body: { machines }, signature, scope: 'registry', keyring, nowMs, maxLifetimeMs: MAX_DOCUMENT_LIFETIME_MS });
  if (!checked.ok || checked.signature === undefined) {
    throw new RegistryError(`${file}: the signature is not accepted (${checked.ok ? 'malformed' : checked.reason}: ${checked.ok ? '' : checked.message}); sign it again with \`qrvend relay registry sign\``);
  }
  try {
    return { machines: machines.length, keyId: checked.keyId, issuedAt: checked.signature.issuedAt, expiresAt: checked.signature.expiresAt, ...index(machines) };
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
export function signRegistry(value: unknown, options: SignRegistryOptions): { machines: RegistryMachine[]; signature: Signature } {
  const source = value !== null && typeof value === 'object' && !Array.isArray(value) ? { machines: (value as { machines?: unknown }).machines } : value;
  const parsed = Unsigned.safeParse(source);
  if (!parsed.success) throw new RegistryError(schemaProblem(parsed.error));
  index(parsed.data.machines);
  const signature = signStatement(REGISTRY_KIND, { machines: parsed.data.machines }, { keyId: options.keyId, key: options.key, nowMs: options.nowMs, lifetimeMs: options.lifetimeMs, maxLifetimeMs: MAX_DOCUMENT_LIFETIME_MS });
  return { machines: parsed.data.machines, signature };
}
