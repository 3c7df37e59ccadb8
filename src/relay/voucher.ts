/**
 * The relay's word for a Start it forwards (docs/decisions/fleet-link.md, "Trust"): the relay checked the
 * wallet's SecretToken, so the Start crosses the broker without it, signed with the relay's own
 * key (scope `start` in the machines' trust file). The machine checks it (src/start/voucher.ts).
 * A second signature confirms that the machine's Approved answer was written to the wallet in time
 * (`start.confirm`): only then does the machine authorize.
 */
import type { KeyObject } from 'node:crypto';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import {
  START_CONFIRM_KIND,
  START_VOUCHER_KIND,
  startConfirmStatement,
  startVoucherStatement,
  type RelayedStartArgs,
  type StartConfirmArgs,
} from '../fleet/contract/commands.js';
import { loadPrivateKey, signStatement, TrustFileError } from '../trust/index.js';

/** A confirmation is sent at once; it must arrive within the machine's grace (src/start/relayed.ts). */
const CONFIRM_LIFETIME_MS = 60_000;

export interface VoucherSigner {
  readonly keyId: string;
  /** The args of a `cmd/start` for `machineId`, signed, with deadlineAt = now + timeoutMs. */
  start(
    machineId: string,
    args: Omit<RelayedStartArgs, 'voucher' | 'deadlineAt'>,
    timeoutMs: number,
    nowMs: number,
  ): RelayedStartArgs & { voucher: { nonce: string } };
  confirm(machineId: string, txId: string, startNonce: string, nowMs: number): StartConfirmArgs;
}

export function voucherSignerOf(keyId: string, key: KeyObject): VoucherSigner {
  return {
    keyId,
    start(machineId, args, timeoutMs, nowMs) {
      const issuedAt = Math.floor(nowMs);
      const unsigned = { ...args, deadlineAt: issuedAt + timeoutMs };
      const voucher = signStatement(START_VOUCHER_KIND, startVoucherStatement(machineId, unsigned), {
        keyId,
        key,
        nowMs: issuedAt,
        lifetimeMs: timeoutMs,
      });
      return { ...unsigned, voucher };
    },
    confirm(machineId, txId, startNonce, nowMs) {
      const voucher = signStatement(START_CONFIRM_KIND, startConfirmStatement(machineId, txId, startNonce), {
        keyId,
        key,
        nowMs: Math.floor(nowMs),
        lifetimeMs: CONFIRM_LIFETIME_MS,
      });
      return { txId, startNonce, voucher };
    },
  };
}

/** Reads relay.voucherKey; a key that cannot be used stops the relay (exit 78). */
export function loadVoucherSigner(file: string, keyId: string): VoucherSigner {
  try {
    return voucherSignerOf(keyId, loadPrivateKey(file));
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.CONFIG_INVALID,
      `relay.voucherKey: ${err instanceof TrustFileError ? err.message : 'the key cannot be read'}`,
      {
        hint:
          'make one with `qrvend fleet keygen` (or openssl genpkey -algorithm ed25519), mode 0600, owned by the ' +
          "relay user; put its public key with the scope start in the machines' trust file",
        details: { file },
      },
    );
  }
}
