/**
 * The relayed Starts the payment side holds for their confirmation, as the fleet worker saw them
 * answered Approved (src/start/relayed.ts holds them; docs/security.md, "Budgets per source").
 *
 * A `start.confirm` signed by the relay's key for a Start held here must never be lost to other
 * traffic: when it is, the wallet was told Approved and the machine drops the Start. So a message
 * on `cmd/start.confirm` that carries the voucher nonce of a held Start (a search per held Start
 * in the raw bytes: the nonce is random, only a reader of that Start's `cmd/start` knows it) does
 * not queue for any intake share: it is parsed and its signature checked at once, and only a
 * confirmation that verifies goes on to the payment side. What a forger who read the `cmd/start`
 * can still spend is bounded per held Start (MAX_CONFIRM_CHECKS signature checks); everything else
 * on the topic spends the untrusted share or the relay key's own (intake.ts).
 */
import {
  START_CONFIRM_KIND,
  StartConfirmArgs,
  startConfirmStatement,
  type RelayedStartResult,
} from '../contract/commands.js';
import { verifyStatement, type Keyring } from '../../trust/index.js';
import { RELAYED_CONFIRM_GRACE_MS, RELAYED_START_MAX_AHEAD_MS } from '../../start/relayed.js';

/** Signature checks one held Start's candidates may cost (about 0.3 s of a Pi 4's CPU at most). */
export const MAX_CONFIRM_CHECKS = 2_000;
/** Starts held at once (a machine serves one session at a time; more is a bug or a flood). */
const MAX_HELD = 16;
/** Kept a little past the payment side's own drop, so its answer (TOO_LATE) is the one that counts. */
const MARGIN_MS = 1_000;

export interface HeldStart {
  txId: string;
  startNonce: string;
  /** Monotonic ms after which the payment side has dropped it. */
  untilMs: number;
  checks: number;
  needle: Buffer;
}

export type ConfirmCheck = { ok: true } | { ok: false; message: string };

export class HeldStarts {
  private readonly held = new Map<string, HeldStart>();

  /**
   * Notes a `cmd/start` answered Approved: the payment side holds it until the relay's deadline
   * (`deadlineAt`, the relay's wall clock) plus the confirmation's grace (src/start/relayed.ts).
   */
  add(args: unknown, result: unknown, clocks: { wallNowMs: number; nowMs: number }): void {
    const startNonce = voucherNonce(args);
    const txId = approvedTxId(result);
    const deadlineAt = (args as { deadlineAt?: unknown } | null)?.deadlineAt;
    if (startNonce === null || txId === null || typeof deadlineAt !== 'number') return;
    const { nowMs } = clocks;
    this.prune(nowMs);
    if (this.held.size >= MAX_HELD) return;
    const leftMs = Math.min(Math.max(0, deadlineAt - clocks.wallNowMs), RELAYED_START_MAX_AHEAD_MS);
    const untilMs = nowMs + leftMs + RELAYED_CONFIRM_GRACE_MS + MARGIN_MS;
    this.held.set(startNonce, { txId, startNonce, untilMs, checks: 0, needle: Buffer.from(startNonce, 'latin1') });
  }

  /** The held Start whose voucher nonce the raw message carries and that may still be checked, or null. */
  candidate(payload: Buffer, nowMs: number): HeldStart | null {
    if (this.held.size === 0) return null;
    this.prune(nowMs);
    for (const entry of this.held.values()) {
      if (entry.checks < MAX_CONFIRM_CHECKS && payload.includes(entry.needle)) return entry;
    }
    return null;
  }

  /**
   * Whether `args` confirm `entry`, signed by a trust-file key of scope `start` (the nonce of the
   * confirmation itself is the payment side's to record). Counts a check against the entry.
   */
  check(entry: HeldStart, args: unknown, machineId: string, keyring: Keyring | null, wallNowMs: number): ConfirmCheck {
    entry.checks += 1;
    const parsed = StartConfirmArgs.safeParse(args);
    if (!parsed.success) return { ok: false, message: 'start.confirm args do not match StartConfirmArgs' };
    const { txId, startNonce, voucher } = parsed.data;
    if (txId !== entry.txId || startNonce !== entry.startNonce)
      return { ok: false, message: 'no such Start is waiting for its confirmation' };
    const verified = verifyStatement({
      kind: START_CONFIRM_KIND,
      body: startConfirmStatement(machineId, txId, startNonce),
      signature: voucher,
      scope: 'start',
      keyring,
      nowMs: wallNowMs,
    });
    if (!verified.ok)
      return { ok: false, message: `not signed by a relay key this machine trusts: ${verified.message}` };
    return { ok: true };
  }

  /** The Start was confirmed (or answered otherwise): nothing more to wait for. */
  remove(entry: HeldStart): void {
    this.held.delete(entry.startNonce);
  }

  private prune(nowMs: number): void {
    for (const [nonce, entry] of this.held) if (entry.untilMs < nowMs) this.held.delete(nonce);
  }
}

function voucherNonce(args: unknown): string | null {
  const voucher = (args as { voucher?: { nonce?: unknown } } | null)?.voucher;
  const nonce = typeof voucher === 'object' && voucher !== null ? voucher.nonce : undefined;
  return typeof nonce === 'string' && nonce.length >= 22 && nonce.length <= 64 ? nonce : null;
}

/** The TransactionId of an Approved answer (the payment side holds exactly those), or null. */
function approvedTxId(result: unknown): string | null {
  const body = (result as Partial<RelayedStartResult> | null)?.body;
  if (typeof body !== 'string') return null;
  try {
    const answer = JSON.parse(body) as { Status?: { Verdict?: unknown }; TransactionId?: unknown };
    return answer.Status?.Verdict === 'Approved' && typeof answer.TransactionId === 'string'
      ? answer.TransactionId
      : null;
  } catch {
    return null;
  }
}
