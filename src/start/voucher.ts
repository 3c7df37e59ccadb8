/**
 * The machine's check of what `qrvend relay` vouches for (docs/decisions/fleet-link.md, "Trust"): a relayed
 * Start carries no SecretToken (the relay checked it), so the machine takes it only with the
 * relay's signature, by a key of its trust file (`fleet.trustFile`) with the scope `start`, over
 * this machine, the body, the deadline and the wallet's address; and a `start.confirm` only with
 * the same key's signature over this machine, the TransactionId and the nonce of the Start's voucher.
 *
 * Nonces. Each voucher's nonce is taken once, kept in memory until its window (at most the relay's
 * timeout plus the clock skew) has passed. Not on disk, on purpose: a durable write per Start
 * would cost the Start an fsync, and what a replay after a restart could do is already closed by
 * durable records: an accepted Start's TransactionId is in the ledger (a replay gets 996), a Start
 * refused before that starts nothing, and a Start only authorizes on a confirm for a Start this
 * process holds (src/start/relayed.ts), which a restart forgets.
 */
import {
  START_CONFIRM_KIND,
  START_VOUCHER_KIND,
  startConfirmStatement,
  startVoucherStatement,
  type RelayedStartArgs,
  type StartConfirmArgs,
} from '../fleet/contract/commands.js';
import { CLOCK_SKEW_MS, verifyStatement, type Checked, type Keyring } from '../trust/index.js';

/** Vouchers within their windows at once; more is a flood (the relay's Starts are rate-bound). */
const MAX_SEEN = 8192;

export class RelayVouchers {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly keyring: Keyring | null,
    private readonly machineId: string,
  ) {}

  /** Whether any key may vouch for a relayed Start here (else the machine says it takes none). */
  get usable(): boolean {
    if (this.keyring === null) return false;
    for (const key of this.keyring.byId.values()) if (key.scopes.has('start')) return true;
    return false;
  }

  /** On success, `nonce` is the voucher's (a confirmation names it). */
  checkStart(args: RelayedStartArgs, nowMs: number): Checked & { nonce?: string } {
    const { voucher, ...rest } = args;
    const checked = this.check(START_VOUCHER_KIND, startVoucherStatement(this.machineId, rest), voucher, nowMs);
    if (checked.ok && (voucher as { expiresAt: number }).expiresAt !== args.deadlineAt) {
      return { ok: false, reason: 'malformed', message: "the voucher's expiry is not the Start's deadline" };
    }
    return checked.ok ? { ...checked, nonce: (voucher as { nonce: string }).nonce } : checked;
  }

  checkConfirm(args: StartConfirmArgs, nowMs: number): Checked {
    return this.check(
      START_CONFIRM_KIND,
      startConfirmStatement(this.machineId, args.txId, args.startNonce),
      args.voucher,
      nowMs,
    );
  }

  private check(kind: string, body: Record<string, unknown>, signature: unknown, nowMs: number): Checked {
    const verified = verifyStatement({ kind, body, signature, scope: 'start', keyring: this.keyring, nowMs });
    if (!verified.ok || verified.signature === undefined) return verified;
    const key = `${verified.keyId} ${verified.signature.nonce}`;
    if (this.seen.has(key))
      return { ok: false, reason: 'replayed', message: `the ${kind}'s nonce was seen before (a replay)` };
    for (const [k, expiresAt] of this.seen) if (expiresAt + CLOCK_SKEW_MS < nowMs) this.seen.delete(k);
    if (this.seen.size >= MAX_SEEN)
      return {
        ok: false,
        reason: 'replayed',
        message: `more than ${MAX_SEEN} relayed Starts within their windows; try again later`,
      };
    this.seen.set(key, verified.signature.expiresAt);
    return { ok: true, keyId: verified.keyId };
  }
}
