/**
 * Who may run a command (design section 10, "Trust"; issue 31 item 1). Broker ACLs say who may
 * publish on a topic, not who wrote a command: every command is signed by an operator key whose
 * scope covers it (contract/scopes.ts), for this machine, within its window, once.
 *
 * The decision is ordered cheapest first so that a flood costs little and spends nothing an
 * operator needs (rate-bound.ts): the scope hook for relayed Starts, unsigned reads when the site
 * allows them, the free checks (key, scope, window), a clock the machine knows is wrong, and only
 * then the Ed25519 check, under its own budget. The nonce is recorded by the caller after the
 * decision and before the command acts (admitNonce).
 */
import type { Keyring } from '../../trust/keys.js';
import type { NonceBook } from '../../trust/nonce-book.js';
import { precheckStatement, verifyPrechecked, type Refusal, type Signature } from '../../trust/signed.js';
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
  /** Scope `start`: a relayed Start, vouched for by the relay and checked by the relayed-Start code (src/start/relayed.ts). */
  | { kind: 'relayed-start' }
  | { kind: 'run'; budget: 'operator' | 'unsigned'; signature: Signature | null }
  | { kind: 'refuse'; reason: Refusal; message: string }
  /** The Ed25519 budget is spent: dropped unanswered, like any flood. */
  | { kind: 'drop' };

export function decideCommand(policy: GatePolicy, input: GateInput, mayVerify: () => boolean): GateDecision {
  const scope = COMMAND_SCOPES[input.name];
  if (scope === 'start') return { kind: 'relayed-start' };
  if ((input.signature === undefined || input.signature === null) && scope === 'read' && policy.allowUnsignedReads) {
    return { kind: 'run', budget: 'unsigned', signature: null };
  }
  const pre = precheckStatement({ signature: input.signature, scope, keyring: policy.keyring, nowMs: input.nowMs });
  if (!pre.ok) return { kind: 'refuse', reason: pre.reason, message: pre.message };
  if (input.clockUnsynced) {
    return { kind: 'refuse', reason: 'clock-unsynced', message: 'this machine\'s clock is known to be unsynced (CLOCK_UNSYNCED): no signed command is taken until it is synchronised (check NTP)' };
  }
  if (!mayVerify()) return { kind: 'drop' };
  const checked = verifyPrechecked({ kind: COMMAND_STATEMENT_KIND, body: commandStatement(input.machineId, input.name, input.args) }, pre);
  if (!checked.ok) return { kind: 'refuse', reason: checked.reason, message: checked.message };
  return { kind: 'run', budget: 'operator', signature: pre.signature };
}

/** Records a signed command's nonce before it acts; a refusal when it was seen (or the book cannot take it). */
export function admitNonce(book: NonceBook, signature: Signature, nowMs: number): { ok: true } | { ok: false; reason: Refusal; message: string } {
  let verdict;
  try {
    verdict = book.admit(signature.keyId, signature.nonce, signature.issuedAt, signature.expiresAt, nowMs);
  } catch (err) {
    return { ok: false, reason: 'replayed', message: `the record of seen nonces cannot be written (${(err as NodeJS.ErrnoException).code ?? 'error'}): nothing signed runs until it can` };
  }
  return verdict.ok ? { ok: true } : { ok: false, reason: 'replayed', message: verdict.message };
}

/** One line for the reply and the log: what was refused and why. */
export function refusalText(reason: Refusal, message: string): string {
  return `refused (${reason}): ${message}`;
}
