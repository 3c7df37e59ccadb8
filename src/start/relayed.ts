/**
 * A Start that came through `qrvend relay` and the fleet broker (`cmd/start`, design section 10,
 * "Start relay"). It is judged by the machine's own Start decisions (core.ts: the same rate
 * limiter keyed by the wallet's address as the relay saw it, the same path, media-type and length
 * checks, SecretToken, identity, replay 996, busy 30, the same ledger and flow), and answered with
 * exactly the HTTP status and body the machine's endpoint would have sent, which the relay returns
 * unchanged.
 *
 * Deadline. The relay stops waiting at `deadlineAt` (epoch ms on the relay's wall clock) and then
 * tells the wallet Declined 30; a Start accepted after that would open a session the wallet was
 * told is declined. So a relayed Start is refused (TOO_LATE, nothing recorded, nothing started)
 *   - when it arrives less than `toleranceMs` before deadlineAt, and
 *   - right before it would be recorded and its Authorization scheduled (the accept hook), when
 *     less than `toleranceMs` is left: the answer must still travel back to the relay in time.
 * "Now" is read once from the wall clock against deadlineAt; everything after is measured on the
 * monotonic clock from that reading. The machine's and the relay's clocks are assumed to agree
 * within the tolerance (both NTP-synchronised; the fleet link raises CLOCK_UNSYNCED otherwise):
 * a machine clock that runs ahead refuses early (safe), one that runs behind by more than the
 * tolerance could accept up to that much late, which is why a deadline more than
 * RELAYED_START_MAX_AHEAD_MS ahead (a clock far behind, or a bogus request) is refused as well.
 * Refusals are counted in the Start stats (`relayedTooLate`) and logged; the ledger is not
 * touched, so the wallet may retry the same TransactionId.
 */
import { performance } from 'node:perf_hooks';
import { RelayedStartArgs, type RelayedStartResult } from '../fleet/contract/commands.js';
import { wallNow as defaultWallNow } from '../core/clock.js';
import { echoOf, serialize, type StartAnswer } from './answers.js';
import type { StartCore } from './core.js';

/** Clock skew between relay and machine plus the answer's trip back to the relay, allowed for. */
export const RELAYED_START_TOLERANCE_MS = 250;
/** A deadline further ahead than this means the clocks disagree (relay timeouts are seconds). */
export const RELAYED_START_MAX_AHEAD_MS = 60_000;
/** RelayedStartResult.body is bounded; a bigger answer goes without its ConsumerData echo. */
const MAX_RESULT_BODY = 65_536;
const CONTENT_TYPE = 'application/json; charset=utf-8';

export type RelayedStartOutcome =
  | { ok: true; result: RelayedStartResult }
  | { ok: false; error: { code: 'BAD_ARGS' | 'TOO_LATE' | 'UNAVAILABLE'; message: string } };

export interface RelayedStartOptions {
  core: StartCore;
  wallNow?: () => number;
  monotonicNow?: () => number;
  toleranceMs?: number;
}

/** Answers `cmd/start`'s args (unchecked input from the broker). Never throws. */
export type RelayedStartHandler = (args: unknown) => Promise<RelayedStartOutcome>;

const startPath = (integratorName: string) => `/payment/v2/transactions/Gateway/${encodeURIComponent(integratorName)}/start`;

export function createRelayedStart(options: RelayedStartOptions): RelayedStartHandler {
  const { core } = options;
  const wallNow = options.wallNow ?? defaultWallNow;
  const monotonicNow = options.monotonicNow ?? (() => performance.now());
  const toleranceMs = options.toleranceMs ?? RELAYED_START_TOLERANCE_MS;

  const tooLate = (client: string, message: string, fields: Record<string, unknown>): RelayedStartOutcome => {
    core.stats.relayedTooLate();
    core.log.warn({ remote: client, relayed: true, ...fields }, `relayed Start refused: ${message}`);
    return { ok: false, error: { code: 'TOO_LATE', message } };
  };

  return async function answerRelayedStart(raw: unknown): Promise<RelayedStartOutcome> {
    const parsed = RelayedStartArgs.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { ok: false, error: { code: 'BAD_ARGS', message: `start args: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}` } };
    }
    const args = parsed.data;
    const client = args.client.length > 0 ? args.client : 'relay';
    core.stats.request();
    core.stats.relayedRequest();

    const arrivedMono = monotonicNow();
    const leftMs = args.deadlineAt - wallNow();
    if (leftMs > RELAYED_START_MAX_AHEAD_MS) {
      return tooLate(client, "the relay's deadline is too far ahead: the relay's and this machine's clocks disagree", { leftMs, txId: transactionIdOf(args.body) });
    }
    if (leftMs < toleranceMs) return tooLate(client, "it reached the machine after the relay's deadline", { lateByMs: -leftMs, txId: transactionIdOf(args.body) });
    const deadlineMono = arrivedMono + leftMs;

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
      answer = await core.decideGuarded(pre.integratorName, body, () => {
        if (monotonicNow() + toleranceMs <= deadlineMono) return null;
        late = true;
        return "machine not responding: the relay's deadline passed before the Start could be accepted";
      });
    }
    if (late) return tooLate(client, "the relay's deadline passed before the Start could be accepted", { txId: answer.transactionId });
    core.stats.answered(answer);
    core.logAnswer(client, answer, { relayed: true });
    return { ok: true, result: toResult(answer) };
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
  if (Buffer.byteLength(body) > MAX_RESULT_BODY) body = JSON.stringify({ Status: answer.body.Status, TransactionId: answer.body.TransactionId });
  const retryAfterS = Number(answer.headers?.['Retry-After']);
  return { httpStatus: answer.httpStatus, contentType: CONTENT_TYPE, body, ...(Number.isInteger(retryAfterS) && retryAfterS >= 1 ? { retryAfterS } : {}) };
}
