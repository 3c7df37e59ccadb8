/**
 * Arguments of the commands that take any (the rest take none). The device checks `args` with
 * these schemas and answers BAD_ARGS naming what was wrong.
 */
import { z } from 'zod';

export const OutboxRetryArgs = z.strictObject({
  /** Retry one row (its id from outbox.list) or, when absent, every dead-lettered row. */
  id: z.number().int().positive().optional(),
});

export const ConfigGetArgs = z.strictObject({
  /** A dotted key path (`gateway.timeoutMs`); absent = the whole effective config. Secrets are never in config. */
  key: z.string().min(1).max(256).optional(),
});

export const ConfigSetArgs = z.strictObject({
  /**
   * Values to layer over the site config file, as a partial config object
   * ({ "mdb": { "sessionIdleTimeoutMs": 30000 } }).
   */
  set: z.record(z.string(), z.unknown()),
  /** How long the restarted agent has to report healthy before the old file comes back. */
  healthyWithinS: z.number().int().min(5).max(600).default(60),
});

/**
 * `cmd/start` from `qrvend relay`: the Start as the wallet sent it, without its SecretToken (the
 * relay checked it and never forwards it, docs/decisions/fleet-link.md "Trust"), vouched for by the relay's
 * own key (scope `start`): `voucher` signs START_VOUCHER_KIND over startVoucherStatement(). The
 * machine answers with the HTTP status and body it would have given on its own endpoint.
 * `deadlineAt` (epoch ms, the relay's clock, the voucher's expiresAt) is when the relay stops
 * waiting: a Start that arrives later is refused and starts nothing (TOO_LATE). An Approved answer
 * authorizes nothing until the relay confirms it reached the wallet in time (`start.confirm`).
 */
export const RelayedStartArgs = z.strictObject({
  /** The Start path's IntegratorName level, as received by the relay. */
  integratorName: z.string().min(1).max(100),
  /** The request body as UTF-8 text without its SecretToken member, at most start.maxBodyBytes. */
  body: z.string().max(1_048_576),
  deadlineAt: z.number().int().positive(),
  /** The wallet's address as the relay saw it (rate limiting on the machine is per relay otherwise). */
  client: z.string().max(64),
  /** The relay's signature (src/trust/signed.ts); its shape is checked by the machine (absent: refused as unsigned). */
  voucher: z.unknown().optional(),
});
export type RelayedStartArgs = z.infer<typeof RelayedStartArgs>;

/** Kinds of the relay's signed statements (src/trust/canonical.ts). */
export const START_VOUCHER_KIND = 'start-voucher';
export const START_CONFIRM_KIND = 'start-confirm';

/** What the relay's voucher for a relayed Start covers (plus the window and nonce of the signature). */
export function startVoucherStatement(
  machineId: string,
  args: Omit<RelayedStartArgs, 'voucher'>,
): Record<string, unknown> {
  return {
    machineId,
    integratorName: args.integratorName,
    body: args.body,
    deadlineAt: args.deadlineAt,
    client: args.client,
  };
}

/**
 * `cmd/start.confirm` from `qrvend relay`: the machine's Approved answer to the Start `txId` was
 * written to the wallet before the relay's deadline; only now may the machine authorize it.
 */
export const StartConfirmArgs = z.strictObject({
  txId: z.string().min(1).max(64),
  /** The nonce of the voucher of the `cmd/start` it confirms: binds the confirmation to that one Start. */
  startNonce: z.string().min(1).max(64),
  voucher: z.unknown().optional(),
});
export type StartConfirmArgs = z.infer<typeof StartConfirmArgs>;

export function startConfirmStatement(machineId: string, txId: string, startNonce: string): Record<string, unknown> {
  return { machineId, txId, startNonce };
}

export const RelayedStartResult = z.object({
  httpStatus: z.number().int().min(100).max(599),
  contentType: z.string().max(128),
  body: z.string().max(65_536),
  /** A 429's Retry-After in seconds, which the relay hands on to the wallet as that header. */
  retryAfterS: z.number().int().min(1).max(86_400).optional(),
});
export type RelayedStartResult = z.infer<typeof RelayedStartResult>;
