/**
 * The Start decisions of one machine, shared by every way a Start can arrive: the HTTP endpoint
 * (server.ts, on start.listen) and a Start relayed over the fleet link (relayed.ts). One exchange,
 * so one rate limiter, one "being accepted" slot and one memory of accepted TransactionIds: a
 * direct Start and a relayed one racing for the same machine are judged as two direct ones would be.
 */
import type { Logger } from '../core/log.js';
import type { QrvendConfig } from '../config/schema.js';
import { StartDeclined, type StartHooks } from './request-checks.js';
import { createStartExchange, type StartExchange } from './exchange.js';
import { createSecretMatcher } from './secret-compare.js';
import { StartStatsCounter } from './stats.js';
import { answerLogFields, type StartAnswer } from './answers.js';
import { scrubbedError } from './respond.js';
import { DeclineCodes } from '../gateway/protocol/codes.js';

export interface StartCoreOptions {
  start: QrvendConfig['start'];
  /** TerminalId values that name this machine (config machine.terminalId, else the HwSerial). */
  acceptedTerminalIds: readonly string[];
  /** UniQR values that name this machine (config machine.uniQr). */
  acceptedUniQr: readonly string[];
  /** The SecretToken, from readSecretToken(start.secretTokenFile). */
  secretToken: Buffer;
  hooks: StartHooks;
  log: Logger;
  /** Milliseconds clock of the rate limiter; tests inject one. */
  now?: () => number;
}

/** Asked right before a Start is recorded and its Authorization scheduled: null = go on, else why not. */
export type AcceptGuard = () => string | null;

export interface StartCore {
  readonly exchange: StartExchange;
  readonly stats: StartStatsCounter;
  /** The Start component's logger. */
  readonly log: Logger;
  /** An accepted Start's Approved answer is on the wire: its Authorization may go (StartHooks.answered). */
  answered(answer: StartAnswer): void;
  /**
   * The one log line per answered Start (remote, HTTP status, verdict, code, reason, TransactionId; never the body).
   */
  logAnswer(remote: string, answer: StartAnswer, extra?: Record<string, unknown>): void;
  /** An error for a log line, the SecretToken scrubbed from it. */
  describeError(err: unknown): { code?: string; message: string };
  /**
   * Runs `decide` with `guard` asked before the accept hook. The checks call the hook
   * synchronously (everything from the TransactionId check to the hook runs in one turn, see
   * request-checks.ts), so the guard set here is the one of this decision and no other.
   */
  decideGuarded(
    integratorName: string,
    body: Buffer,
    guard: AcceptGuard,
    relayed?: { vouched: true; held: true },
  ): Promise<StartAnswer>;
  /** A held (relayed) Start: the relay confirmed it (authorize) or never will (close it, nothing owed). */
  confirmHeld(txId: string): void;
  dropHeld(txId: string, why: string): void;
}

export function createStartCore(options: StartCoreOptions): StartCore {
  const log = options.log.child({ component: 'start' });
  // Error messages from the hooks or Node are logged; scrub the token in case one quotes it.
  const secretText = options.secretToken.toString('utf8');
  const describeError = (err: unknown) => scrubbedError(err, secretText);
  let guard: AcceptGuard | null = null;
  let hold = false;
  const hooks: StartHooks = {
    answered: (txId) => options.hooks.answered?.(txId),
    readerBusy: () => options.hooks.readerBusy(),
    transactionSeen: (txId) => options.hooks.transactionSeen(txId),
    accept: (request) => {
      const refused = guard?.() ?? null;
      // Thrown before the hook: nothing recorded, nothing started.
      if (refused !== null) throw new StartDeclined(DeclineCodes.MachineNotResponding, refused);
      return hold ? options.hooks.accept(request, { held: true }) : options.hooks.accept(request);
    },
  };
  const exchange = createStartExchange({
    integratorName: options.start.integratorName,
    acceptedTerminalIds: options.acceptedTerminalIds,
    acceptedUniQr: options.acceptedUniQr,
    secret: createSecretMatcher(options.secretToken),
    hooks,
    maxBodyBytes: options.start.maxBodyBytes,
    rateLimit: options.start.rateLimit,
    ...(options.now ? { now: options.now } : {}),
    onError: (stage, err) =>
      log.warn(
        { stage, err: describeError(err) },
        stage === 'accept'
          ? 'Start accept failed; answered Declined 6'
          : 'Start check failed unexpectedly; answered Declined 999',
      ),
  });
  function logAnswer(remote: string, answer: StartAnswer, extra: Record<string, unknown> = {}): void {
    const fields = { ...answerLogFields(remote, answer), ...extra };
    if (answer.body.Status.Verdict === 'Approved') log.info(fields, 'Start accepted');
    else if (answer.httpStatus === 429) log.debug(fields, 'Start refused');
    else log.info(fields, 'Start declined');
  }

  return {
    exchange,
    answered(answer) {
      if (answer.body.Status.Verdict === 'Approved' && answer.transactionId !== undefined)
        hooks.answered?.(answer.transactionId);
    },
    stats: new StartStatsCounter(),
    log,
    logAnswer,
    describeError,
    decideGuarded(integratorName, body, decisionGuard, relayed) {
      guard = decisionGuard;
      hold = relayed?.held === true;
      try {
        return exchange.decide(integratorName, body, relayed?.vouched === true);
      } finally {
        guard = null;
        hold = false;
      }
    },
    confirmHeld(txId) {
      options.hooks.answered?.(txId);
    },
    dropHeld(txId, why) {
      options.hooks.dropped?.(txId, why);
    },
  };
}
