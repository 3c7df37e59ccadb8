/**
 * A Start that came through `qrvend relay` and the fleet broker (`cmd/start`, docs/decisions/fleet-link.md,
 * "Start relay"). It is judged by the machine's own Start decisions (core.ts: the same rate
 * limiter keyed by the wallet's address as the relay saw it, the same path, media-type and length
 * checks, identity, replay 996, busy 30, the same ledger and flow), and answered with exactly the
 * HTTP status and body the machine's endpoint would have sent.
 *
 * Trust (docs/decisions/fleet-link.md, "Trust"). The body comes without its SecretToken: the relay checked
 * the token and vouches for the Start with its own key (scope `start`, voucher.ts). A Start
 * without a good voucher is refused and starts nothing.
 *
 * The wallet is told Approved if and only if the machine authorizes. An accepted relayed Start is
 * recorded (authorizing) and answered, but its Authorization is held: the relay writes the answer
 * to the wallet and, only if that was before its deadline, sends `start.confirm`; the machine
 * authorizes on that confirmation (confirm()). No confirmation by the deadline plus
 * RELAYED_CONFIRM_GRACE_MS: the Start is closed as declined (nothing owed, nothing sent to the
 * gateway) and the session slot is freed. docs/protocol-decisions.md says why a lost confirmation
 * is the side to err on.
 *
 * Deadline. The relay stops waiting at `deadlineAt` (epoch ms on the relay's wall clock) and then
 * tells the wallet Declined 30. A relayed Start is refused (TOO_LATE, nothing recorded, nothing
 * started)
 *   - when it arrives less than `toleranceMs` before deadlineAt, and
 *   - right before it would be recorded (the accept hook), when less than `toleranceMs` is left.
 * "Now" is read once from the wall clock against deadlineAt; everything after is measured on the
 * monotonic clock from that reading. A deadline more than RELAYED_START_MAX_AHEAD_MS ahead (a
 * clock far behind, or a bogus request) is refused as well. Refusals are counted in the Start
 * stats (`relayedTooLate`, `relayedUnvouched`, `relayedDropped`) and logged; a refused Start
 * leaves the ledger untouched, so the wallet may retry the same TransactionId.
 */
import { performance } from 'node:perf_hooks';
import { RelayedStartArgs, StartConfirmArgs, type RelayedStartResult } from '../fleet/contract/commands.js';
import { wallNow as defaultWallNow } from '../core/clock.js';
import { echoOf, serialize, type StartAnswer } from './answers.js';
import type { StartCore } from './core.js';
import type { RelayVouchers } from './voucher.js';

/** Clock skew between relay and machine plus the answer's trip back to the relay, allowed for. */
export const RELAYED_START_TOLERANCE_MS = 250;
/** A deadline further ahead than this means the clocks disagree (relay timeouts are seconds). */
export const RELAYED_START_MAX_AHEAD_MS = 60_000;
/**
 * How long after the relay's deadline a held Start waits for its confirmation: the relay sends it
 * at the latest at its deadline, and it then crosses the broker once more (a slow cellular link).
 */
export const RELAYED_CONFIRM_GRACE_MS = 5_000;
/** RelayedStartResult.body is bounded; a bigger answer goes without its ConsumerData echo. */
const MAX_RESULT_BODY = 65_536;
const CONTENT_TYPE = 'application/json; charset=utf-8';

export type RelayedStartOutcome =
  | { ok: true; result: RelayedStartResult }
  | { ok: false; error: { code: 'BAD_ARGS' | 'TOO_LATE' | 'UNAVAILABLE'; message: string } };

export type ConfirmOutcome =
  | { ok: true; result: { authorized: string } }
  | { ok: false; error: { code: 'BAD_ARGS' | 'TOO_LATE'; message: string } };

export interface RelayedStartOptions {
  core: StartCore;
  /** The relay keys this machine trusts (fleet.trustFile). */
  vouchers: RelayVouchers;
  wallNow?: () => number;
  monotonicNow?: () => number;
  toleranceMs?: number;
  confirmGraceMs?: number;
}

export interface RelayedStarts {
  /** Answers `cmd/start`'s args (unchecked input from the broker). Never throws. */
  start(args: unknown): Promise<RelayedStartOutcome>;
  /** Answers `cmd/start.confirm`'s args: authorizes the held Start it names. Never throws. */
  confirm(args: unknown): ConfirmOutcome;
  /** Held Starts waiting for their confirmation (TransactionIds), for tests and stats. */
  readonly held: readonly string[];
  /** Drops every held Start now (shutting down: nothing will confirm them). */
  dropAll(why: string): void;
}

interface Held {
  nonce: string;
  timer: NodeJS.Timeout;
}

const startPath = (integratorName: string) =>
  `/payment/v2/transactions/Gateway/${encodeURIComponent(integratorName)}/start`;

/** The state a relayed Start's handling keeps: the clocks, the bounds and the Starts held for their confirmation. */
class RelayedStartBook {
  readonly held = new Map<string, Held>();
  private readonly core: StartCore;
  private readonly vouchers: RelayVouchers;
  private readonly wallNow: () => number;
  private readonly monotonicNow: () => number;
  private readonly toleranceMs: number;
  private readonly graceMs: number;

  constructor(options: RelayedStartOptions) {
    this.core = options.core;
    this.vouchers = options.vouchers;
    this.wallNow = options.wallNow ?? defaultWallNow;
    this.monotonicNow = options.monotonicNow ?? (() => performance.now());
    this.toleranceMs = options.toleranceMs ?? RELAYED_START_TOLERANCE_MS;
    this.graceMs = options.confirmGraceMs ?? RELAYED_CONFIRM_GRACE_MS;
  }

  drop(txId: string, why: string): void {
    const entry = this.held.get(txId);
    if (entry === undefined) return;
    this.held.delete(txId);
    clearTimeout(entry.timer);
    this.core.stats.relayedDropped();
    this.core.dropHeld(txId, why);
  }

  private tooLate(client: string, message: string, fields: Record<string, unknown>): RelayedStartOutcome {
    this.core.stats.relayedTooLate();
    this.core.log.warn({ remote: client, relayed: true, ...fields }, `relayed Start refused: ${message}`);
    return { ok: false, error: { code: 'TOO_LATE', message } };
  }

  async start(raw: unknown): Promise<RelayedStartOutcome> {
    const { core } = this;
    const parsed = RelayedStartArgs.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return {
        ok: false,
        error: {
          code: 'BAD_ARGS',
          message: `start args: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
        },
      };
    }
    const args = parsed.data;
    const client = args.client.length > 0 ? args.client : 'relay';
    core.stats.request();
    core.stats.relayedRequest();

    const arrivedMono = this.monotonicNow();
    const wall = this.wallNow();
    const vouched = this.vouchers.checkStart(args, wall);
    if (!vouched.ok || vouched.nonce === undefined) return this.unvouched(client, args, vouched);
    const leftMs = args.deadlineAt - wall;
    if (leftMs > RELAYED_START_MAX_AHEAD_MS) {
      return this.tooLate(
        client,
        "the relay's deadline is too far ahead: the relay's and this machine's clocks disagree",
        { leftMs, txId: transactionIdOf(args.body) },
      );
    }
    if (leftMs < this.toleranceMs)
      return this.tooLate(client, "it reached the machine after the relay's deadline", {
        lateByMs: -leftMs,
        txId: transactionIdOf(args.body),
      });
    return this.decide(args, client, arrivedMono + leftMs, vouched.nonce);
  }

  private unvouched(
    client: string,
    args: RelayedStartArgs,
    vouched: ReturnType<RelayVouchers['checkStart']>,
  ): RelayedStartOutcome {
    this.core.stats.relayedUnvouched();
    const message = vouched.ok ? 'not vouched for' : vouched.message;
    this.core.log.warn(
      {
        remote: client,
        relayed: true,
        reason: vouched.ok ? 'malformed' : vouched.reason,
        txId: transactionIdOf(args.body),
      },
      `relayed Start refused: not vouched for by a trusted relay key: ${message}`,
    );
    return {
      ok: false,
      error: {
        code: 'BAD_ARGS',
        message: `not vouched for by a relay key this machine trusts (fleet.trustFile, scope start): ${message}`,
      },
    };
  }

  /** The machine's own Start decisions, with the relay's deadline checked right before the Start is recorded. */
  private async decide(
    args: RelayedStartArgs,
    client: string,
    deadlineMono: number,
    nonce: string,
  ): Promise<RelayedStartOutcome> {
    const { core } = this;
    let answer: StartAnswer;
    const body = Buffer.from(args.body, 'utf8');
    const pre = core.exchange.preflight({
      method: 'POST',
      url: startPath(args.integratorName),
      headers: { 'content-type': CONTENT_TYPE, 'content-length': String(body.length) },
      client,
    });
    let late = false;
    if (!pre.ok) {
      answer = pre.answer;
    } else {
      answer = await core.decideGuarded(
        pre.integratorName,
        body,
        () => {
          if (this.monotonicNow() + this.toleranceMs <= deadlineMono) return null;
          late = true;
          return "machine not responding: the relay's deadline passed before the Start could be accepted";
        },
        { vouched: true, held: true },
      );
    }
    if (late)
      return this.tooLate(client, "the relay's deadline passed before the Start could be accepted", {
        txId: answer.transactionId,
      });
    const txId = answer.transactionId;
    if (answer.body.Status.Verdict === 'Approved' && txId !== undefined) this.hold(txId, nonce, deadlineMono);
    core.stats.answered(answer);
    core.logAnswer(client, answer, { relayed: true, held: this.held.has(txId ?? '') });
    return { ok: true, result: toResult(answer) };
  }

  /** Holds an Approved Start's Authorization until its confirmation, or drops it after the grace. */
  private hold(txId: string, nonce: string, deadlineMono: number): void {
    const waitMs = Math.max(0, deadlineMono + this.graceMs - this.monotonicNow());
    const timer = setTimeout(
      () => this.drop(txId, 'the relay did not confirm that the wallet got the answer in time'),
      waitMs,
    );
    timer.unref();
    this.held.set(txId, { nonce, timer });
  }

  confirm(raw: unknown): ConfirmOutcome {
    const { core } = this;
    const parsed = StartConfirmArgs.safeParse(raw);
    if (!parsed.success)
      return { ok: false, error: { code: 'BAD_ARGS', message: 'start.confirm args do not match StartConfirmArgs' } };
    const args = parsed.data;
    // Cheapest first: a confirmation for no Start held here costs a map lookup, not a signature check.
    const entry = this.held.get(args.txId);
    if (entry === undefined || entry.nonce !== args.startNonce) {
      // Dropped already (the confirmation came after the grace), or never held here (anyone's junk: debug only).
      core.log.debug(
        { txId: args.txId },
        'relayed Start confirmation for a Start not held (dropped already, or unknown): nothing authorized',
      );
      return { ok: false, error: { code: 'TOO_LATE', message: 'no such Start is waiting for its confirmation' } };
    }
    const checked = this.vouchers.checkConfirm(args, this.wallNow());
    if (!checked.ok) {
      // The Start stays held until its own deadline: a forged confirmation neither confirms nor drops it.
      core.log.warn(
        { txId: args.txId, reason: checked.reason },
        `relayed Start confirmation refused: ${checked.message}`,
      );
      return {
        ok: false,
        error: { code: 'BAD_ARGS', message: `not signed by a relay key this machine trusts: ${checked.message}` },
      };
    }
    this.held.delete(args.txId);
    clearTimeout(entry.timer);
    core.confirmHeld(args.txId);
    return { ok: true, result: { authorized: args.txId } };
  }
}

export function createRelayedStart(options: RelayedStartOptions): RelayedStarts {
  const book = new RelayedStartBook(options);
  return {
    start: (raw) => book.start(raw),
    confirm: (raw) => book.confirm(raw),
    get held() {
      return [...book.held.keys()];
    },
    dropAll(why) {
      for (const txId of [...book.held.keys()]) book.drop(txId, why);
    },
  };
}

/** The TransactionId for the log line of a refusal (the body is not judged then); undefined when unreadable. */
function transactionIdOf(body: string): string | undefined {
  try {
    return echoOf(JSON.parse(body)).TransactionId;
  } catch {
    return undefined;
  }
}

function toResult(answer: StartAnswer): RelayedStartResult {
  let body = serialize(answer);
  if (Buffer.byteLength(body) > MAX_RESULT_BODY)
    body = JSON.stringify({ Status: answer.body.Status, TransactionId: answer.body.TransactionId });
  const retryAfterS = Number(answer.headers?.['Retry-After']);
  return {
    httpStatus: answer.httpStatus,
    contentType: CONTENT_TYPE,
    body,
    ...(Number.isInteger(retryAfterS) && retryAfterS >= 1 ? { retryAfterS } : {}),
  };
}
