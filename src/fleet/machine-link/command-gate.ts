/**
 * Who may run a command (docs/security.md, "Signed commands"). Broker ACLs say who may
 * publish on a topic, not who wrote a command: every command is signed by an operator key whose
 * scope covers it (contract/scopes.ts), for this machine, within its window, once.
 *
 * The decision is ordered cheapest first so that a flood costs little and spends nothing an
 * operator needs (rate-bound.ts): the scope hook for relayed Starts, unsigned reads when the site
 * allows them, the free checks (key, scope, window), a clock the machine knows is wrong, and only
 * then the Ed25519 check, under its own budget. A command that passed runs on its own key's budget
 * for its scope (key-budgets.ts). The nonce is recorded by the caller after the decision and before
 * the command acts (admitNonce), under the key's fingerprint and within the key's share.
 */
import type { Keyring, Scope } from '../../trust/keys.js';
import type { NonceBook } from '../../trust/nonce-book.js';
import { formatProblem } from '../../trust/signature-format.js';
import { precheckStatement, verifyPrechecked, type Refusal, type Signature } from '../../trust/signed.js';
import { spenderOf, type KeySpender } from './key-budgets.js';
import { COMMAND_SCOPES, COMMAND_STATEMENT_KIND, commandStatement } from '../contract/scopes.js';
import type { CommandName } from '../contract/topics.js';

export interface GatePolicy {
  /** null: no trust file, or one that could not be read: nothing signed is taken. */
  keyring: Keyring | null;
  allowUnsignedReads: boolean;
}

export interface GateInput {
  machineId: string;
  name: CommandName;
  args: unknown;
  /** As received; undefined = unsigned. */
  signature: unknown;
  /** Wall clock, epoch ms. */
  nowMs: number;
  /** The machine knows its wall clock is wrong (the CLOCK_UNSYNCED alarm is raised). */
  clockUnsynced: boolean;
}

export type GateDecision =
  /**
   * Scope `start`: a relayed Start, vouched for by the relay and checked by the relayed-Start code
   * (src/start/relayed.ts).
   */
  | { kind: 'relayed-start' }
  | { kind: 'run'; budget: 'unsigned'; signature: null }
  /** Signed: runs on `signer`'s own budget for its scope. */
  | { kind: 'run'; budget: 'key'; signature: Signature; signer: KeySpender }
  /** `keyId`: the key of the trust file the signature named, when it names one (counted per key). */
  | { kind: 'refuse'; reason: Refusal; message: string; keyId?: string }
  /** The Ed25519 budget is spent: dropped unanswered, like any flood. */
  | { kind: 'drop' };

/** The id the signature names, when the keyring has such a key (what is counted per key stays bounded). */
function trustedKeyId(keyring: Keyring | null, signature: unknown): string | undefined {
  if (typeof signature !== 'object' || signature === null) return undefined;
  const keyId = (signature as { keyId?: unknown }).keyId;
  return typeof keyId === 'string' && keyring?.byId.has(keyId) === true ? keyId : undefined;
}

/**
 * `mayVerify(scope)`: whether the Ed25519 budget allows one more check for a signature of `scope`
 * (the caller keeps a reserve for `operate` and `configure`).
 */
export function decideCommand(
  policy: GatePolicy,
  input: GateInput,
  mayVerify: (scope: Scope) => boolean,
): GateDecision {
  const scope = COMMAND_SCOPES[input.name];
  if (scope === 'start') return { kind: 'relayed-start' };
  if ((input.signature === undefined || input.signature === null) && scope === 'read' && policy.allowUnsignedReads) {
    return { kind: 'run', budget: 'unsigned', signature: null };
  }
  const keyId = trustedKeyId(policy.keyring, input.signature);
  const refuse = (reason: Refusal, message: string): GateDecision => ({
    kind: 'refuse',
    reason,
    message,
    ...(keyId === undefined ? {} : { keyId }),
  });
  const pre = precheckStatement({ signature: input.signature, scope, keyring: policy.keyring, nowMs: input.nowMs });
  if (!pre.ok) return refuse(pre.reason, pre.message);
  const oldFormat = formatProblem(COMMAND_STATEMENT_KIND, pre.signature);
  if (oldFormat !== null) return refuse('old-format', oldFormat);
  if (input.clockUnsynced) {
    const why =
      "this machine's clock is known to be unsynced (CLOCK_UNSYNCED): " +
      'no signed command is taken until it is synchronised (check NTP)';
    return refuse('clock-unsynced', why);
  }
  if (!mayVerify(scope)) return { kind: 'drop' };
  const checked = verifyPrechecked(
    { kind: COMMAND_STATEMENT_KIND, body: commandStatement(input.machineId, input.name, input.args) },
    pre,
  );
  if (!checked.ok) return refuse(checked.reason, checked.message);
  const signer = spenderOf(policy.keyring!, pre.signature.keyId, scope)!;
  return { kind: 'run', budget: 'key', signature: pre.signature, signer };
}

/**
 * Records a signed command's nonce before it acts, under its key's fingerprint (a key renamed or
 * listed under a second id is the same key) and within its share; a refusal when it was seen, the
 * share is full, or the book cannot take it.
 */
export function admitNonce(
  book: NonceBook,
  signature: Signature,
  nowMs: number,
  signer: Pick<KeySpender, 'fingerprint' | 'nonceShare'>,
): { ok: true } | { ok: false; reason: Refusal; message: string } {
  let verdict;
  try {
    const { nonce, issuedAt, expiresAt } = signature;
    verdict = book.admit(signer.fingerprint, nonce, issuedAt, expiresAt, nowMs, signer.nonceShare);
  } catch (err) {
    return {
      ok: false,
      reason: 'replayed',
      message:
        `the record of seen nonces cannot be written (${(err as NodeJS.ErrnoException).code ?? 'error'}): ` +
        `nothing signed runs until it can`,
    };
  }
  return verdict.ok ? { ok: true } : { ok: false, reason: 'replayed', message: verdict.message };
}

/** One line for the reply and the log: what was refused and why. */
export function refusalText(reason: Refusal, message: string): string {
  return `refused (${reason}): ${message}`;
}
