/**
 * The checks on a Start body, in the order of docs/decisions/payment-flows.md / docs/decisions/sales-and-recovery.md,
 * each failure a
 * Declined with nothing started:
 *   JSON, nested at most MAX_JSON_DEPTH levels, no member named twice in one object (998) -> schema and lengths
 *   (997/998) -> integrator authenticated (9) ->
 *   this machine (50) -> TransactionId never seen (996) -> reader ready, no session (30) ->
 *   accept (the payment side records it durably and starts the Authorization; a throw is 6).
 *
 * Authentication. The integratorName in the path and the SecretToken are judged together, and
 * both are always computed, so every authentication failure (wrong name, wrong token, empty,
 * short or long token) gets the same answer after the same work. A present string SecretToken is
 * therefore never judged by the schema's length rule: that rule would answer 998 for a short
 * token and 9 for a right-length wrong one, telling an attacker the length. A missing or
 * non-string SecretToken is a schema failure (997/998); that reveals nothing about the secret.
 *
 * Races. Everything from the TransactionId check to marking the Start as being accepted runs
 * synchronously, so two Starts racing (same TransactionId or not) cannot both pass: one Start
 * is accepted at a time, a second with the same TransactionId gets 996, another one gets 30.
 */
import { DeclineCodes } from '../gateway/protocol/codes.js';
import { START_LIMITS, validateStartRequest, type StartRequest } from '../gateway/protocol/start.js';
import { approved, declined, echoOf, httpRefusals, type Echo, type StartAnswer } from './answers.js';
import { jsonDepthWithin, MAX_JSON_DEPTH } from './json-depth.js';
import { firstDuplicateMember } from './json-members.js';
import type { SecretMatcher } from './secret-compare.js';

/** Thrown by the accept hook to decline a Start with a specific code; its message is shown to the wallet. */
export class StartDeclined extends Error {
  constructor(
    readonly declineCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'StartDeclined';
  }
}

export interface StartHooks {
  /** null = reader enabled and idle; otherwise why a session cannot start now. */
  readerBusy(): string | null;
  /** True when this TransactionId was already used (the ledger knows it). */
  transactionSeen(txId: string): boolean;
  /**
   * Records the Start durably and starts the Authorization. Resolving means the Start is
   * accepted (answered Approved); a throw means nothing was started: a StartDeclined is answered
   * with its code and message (e.g. 1 for a zero balance), anything else with Declined 6.
   * The request's SecretToken is replaced by a redaction marker: the secret never reaches
   * the ledger. `held`: the Authorization waits for answered() or dropped() (a relayed Start
   * waiting for the relay's confirmation, src/start/relayed.ts); otherwise it follows at once.
   */
  accept(request: StartRequest, options?: { held?: boolean }): Promise<void>;
  /**
   * The Approved answer to this accepted Start is written (the HTTP endpoint says so right after
   * the socket write; a Start relayed over the fleet link does not). Lets the Authorization follow
   * the answer at once instead of on the next turn; optional, the flow does not wait for it.
   */
  answered?(txId: string): void;
  /** A held Start will never be confirmed: close it with nothing owed and free the slot. */
  dropped?(txId: string, why: string): void;
}

export interface StartCheckOptions {
  integratorName: string;
  acceptedTerminalIds: readonly string[];
  acceptedUniQr: readonly string[];
  secret: SecretMatcher;
  hooks: StartHooks;
  /** How many accepted TransactionIds are remembered here besides the hook (defence in depth). */
  rememberAccepted?: number;
  /** Told about a failed accept hook or an unforeseen error (the wallet only sees 6 or 999). */
  onError?: (stage: 'accept' | 'internal', err: unknown) => void;
}

/** Stands in for the SecretToken wherever a request travels past authentication. */
export const REDACTED_TOKEN = '*'.repeat(START_LIMITS.SecretToken);

/** The answer to a wrong integrator name or token (the relay gives the same, src/relay/server.ts). */
export const AUTH_FAILED = 'not allowed: integrator not authenticated';

export interface StartChecks {
  /**
   * Judges a received body addressed to `pathIntegratorName`. Never throws. `vouched`: the body
   * comes from `qrvend relay`, whose signature the caller checked; it carries no SecretToken (the
   * relay checked the token) and one that does is refused like a wrong token.
   */
  decide(pathIntegratorName: string, body: Buffer, vouched?: boolean): Promise<StartAnswer>;
  /** The TransactionId being accepted right now, if any (for stats and tests). */
  readonly accepting: string | null;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export type ReadStartBody =
  | {
      ok: true;
      request: StartRequest;
      echo: Echo;
      /** The SecretToken as sent ('' when none): compare it, never log it. */
      presented: string;
      /** The body as parsed, every member as sent (the relay forwards it without SecretToken). */
      value: Record<string, unknown>;
    }
  | { ok: false; answer: StartAnswer };

/**
 * The first checks on a Start body, before anything about this machine is asked: UTF-8 JSON,
 * depth, no member twice, schema and lengths. `qrvend relay` runs these too, so a body it
 * cannot read gets exactly the answer the machine would give.
 */
export function readStartBody(body: Buffer, options: { vouched?: boolean } = {}): ReadStartBody {
  let parsed: unknown;
  let duplicate: string | null;
  try {
    const text = utf8.decode(body);
    if (!jsonDepthWithin(text)) {
      return {
        ok: false,
        answer: declined(
          DeclineCodes.ValidationError,
          `body nested deeper than ${MAX_JSON_DEPTH} levels`,
          {},
          200,
          'JSON too deep',
        ),
      };
    }
    parsed = JSON.parse(text);
    duplicate = firstDuplicateMember(text);
  } catch {
    return {
      ok: false,
      answer: declined(DeclineCodes.ValidationError, 'body is not valid JSON (UTF-8)', {}, 200, 'not JSON'),
    };
  }
  if (duplicate !== null) {
    // The name only (never a value), cut and escaped: it is the wallet's own text, but it reaches our log.
    const name = JSON.stringify(duplicate.slice(0, 40));
    return {
      ok: false,
      answer: declined(
        DeclineCodes.ValidationError,
        `body is malformed: member ${name} appears more than once in one object`,
        {},
        200,
        'duplicate member',
      ),
    };
  }
  const echo = echoOf(parsed);

  // Take a present string SecretToken out of the schema's hands (see the header comment).
  let presented = '';
  let forSchema = parsed;
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const token = (parsed as Record<string, unknown>)['SecretToken'];
    if (typeof token === 'string') {
      presented = token;
      forSchema = { ...(parsed as Record<string, unknown>), SecretToken: REDACTED_TOKEN };
    } else if (token === undefined && options.vouched === true) {
      // A Start relayed by `qrvend relay` comes without its token: the relay checked it (voucher.ts).
      forSchema = { ...(parsed as Record<string, unknown>), SecretToken: REDACTED_TOKEN };
    }
  }
  const validated = validateStartRequest(forSchema);
  if (!validated.ok) {
    return {
      ok: false,
      answer: declined(validated.code, validated.message, echo, 200, `schema: ${validated.member || 'body'}`),
    };
  }
  return { ok: true, request: validated.value, echo, presented, value: parsed as Record<string, unknown> };
}

export function createStartChecks(options: StartCheckOptions): StartChecks {
  const checks = new StartCheckState(options);
  return {
    async decide(pathIntegratorName, body, vouched = false) {
      try {
        return await checks.decide(pathIntegratorName, body, vouched);
      } catch (err) {
        options.onError?.('internal', err);
        // A hook that throws synchronously, or an input no check foresaw: still an answer, never a 5xx.
        return httpRefusals.internalError();
      }
    },
    get accepting() {
      return checks.accepting;
    },
  };
}

/**
 * What the checks remember between Starts: the TransactionId being accepted and the ones
 * accepted lately. Everything from decide() to the accept hook runs in one turn (see the header).
 */
class StartCheckState {
  private readonly terminalIds: ReadonlySet<string>;
  private readonly uniQrs: ReadonlySet<string>;
  private readonly remembered = new Set<string>();
  private readonly rememberMax: number;
  accepting: string | null = null;

  constructor(private readonly options: StartCheckOptions) {
    this.terminalIds = new Set(options.acceptedTerminalIds);
    this.uniQrs = new Set(options.acceptedUniQr);
    this.rememberMax = options.rememberAccepted ?? 10_000;
  }

  async decide(pathIntegratorName: string, body: Buffer, vouched: boolean): Promise<StartAnswer> {
    const read = readStartBody(body, { vouched });
    if (!read.ok) return read.answer;
    const { request, presented, echo } = read;
    const refused =
      this.refusedAuthentication(pathIntegratorName, presented, vouched, echo) ?? this.refusedMachine(request, echo);
    if (refused !== null) return refused;
    return this.accept(request, echo);
  }

  private refusedAuthentication(
    pathIntegratorName: string,
    presented: string,
    vouched: boolean,
    echo: Echo,
  ): StartAnswer | null {
    // Both computed, always: the answer and the work do not depend on which one failed. The
    // integrator name is this machine's to judge even when the relay vouches for the token: a
    // relay serves several integrators, and one must not start sessions on another's machines.
    const nameOk = pathIntegratorName === this.options.integratorName;
    const tokenOk = vouched ? presented === '' : this.options.secret.matches(presented);
    if (nameOk && tokenOk) return null;
    return declined(
      DeclineCodes.NotAllowed,
      AUTH_FAILED,
      echo,
      200,
      nameOk ? 'token mismatch' : 'integratorName mismatch',
    );
  }

  private refusedMachine(request: StartRequest, echo: Echo): StartAnswer | null {
    // Every identifier the wallet sent must name this machine: a Start naming another terminal
    // must not open a session here even if its UniQR matches.
    const terminalOk = request.TerminalId == null || this.terminalIds.has(request.TerminalId);
    const uniQrOk = request.UniQR == null || this.uniQrs.has(request.UniQR);
    if (terminalOk && uniQrOk) return null;
    return declined(
      DeclineCodes.UnknownMachine,
      'unknown machine: TerminalId/UniQR do not name this machine',
      echo,
      200,
      'other machine',
    );
  }

  /** The TransactionId and busy checks, then the accept hook: synchronous up to the hook's call. */
  private async accept(request: StartRequest, echo: Echo): Promise<StartAnswer> {
    const txId = request.TransactionId;
    if (txId === this.accepting || this.remembered.has(txId) || this.options.hooks.transactionSeen(txId)) {
      return declined(
        DeclineCodes.TransactionIdUnknownOrDuplicate,
        'TransactionId already used',
        echo,
        200,
        'replayed TransactionId',
      );
    }

    const busy = this.accepting !== null ? 'another Start is being accepted' : this.options.hooks.readerBusy();
    if (busy !== null) {
      return declined(DeclineCodes.MachineNotResponding, `machine busy: ${busy}`, echo, 200, `busy: ${busy}`);
    }

    this.accepting = txId;
    try {
      await this.options.hooks.accept({ ...request, SecretToken: REDACTED_TOKEN });
      this.remember(txId);
      return approved(echo);
    } catch (err) {
      if (err instanceof StartDeclined)
        return declined(err.declineCode, err.message, echo, 200, `declined by the payment side: ${err.message}`);
      // The hook's error may describe internals: it goes to the log, not to the wallet.
      this.options.onError?.('accept', err);
      return declined(
        DeclineCodes.GeneralSystemFailure,
        'general system failure: Start not accepted, nothing started',
        echo,
        200,
        'accept failed',
      );
    } finally {
      this.accepting = null;
    }
  }

  private remember(txId: string): void {
    this.remembered.add(txId);
    if (this.remembered.size > this.rememberMax) {
      const oldest = this.remembered.values().next().value;
      if (oldest !== undefined) this.remembered.delete(oldest);
    }
  }
}
