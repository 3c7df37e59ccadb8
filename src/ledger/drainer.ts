/**
 * The outbox drainer: sends recorded Settlements, Cancels and Voids to the gateway, byte for byte
 * as recorded, until each is approved or given up.
 *
 * - One request in flight per TransactionId, oldest row first; at most `store.concurrency` overall.
 * - Transport failures and "try again" declines (RETRYABLE_DECLINE_CODES) wait a backoff with full
 *   jitter and are retried for `store.retryWindowHours` from enqueue time; the window and the next
 *   attempt live in the ledger, so a restart continues the same schedule.
 * - Any other decline, or the end of the window, dead-letters the row (kept for a person, with an
 *   alarm). Approved rows are kept `store.retentionDays`, then pruned.
 *
 * Nothing here blocks: sends are promises, ledger writes are short synchronous transactions (this
 * runs in the payment worker). While the ledger is unwritable nothing is sent, since the result
 * could not be recorded.
 */
import { ErrorCodes } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { silentLogger } from '../core/log.js';
import type { QrvendConfig } from '../config/schema.js';
import type { GatewayOutcome } from '../gateway/outcome.js';
import type { ClockStep, ClockStepDetector } from '../core/clock.js';
import { judgeAttempt, type BackoffPolicy } from './backoff.js';
import { realTimers, type LedgerTimers } from './connection.js';
import type { Ledger } from './ledger.js';
import { describeError } from './sqlite-errors.js';
import type { OutboxCounts, OutboxOperation, OutboxRow } from './types.js';

/** The part of the gateway client the drainer needs (GatewayClient satisfies it). */
export interface OutboxSender {
  sendRaw(op: OutboxOperation, bodyText: string): Promise<GatewayOutcome<unknown>>;
}

export type DrainerStoreConfig = Pick<
  QrvendConfig['store'],
  'concurrency' | 'backoffBaseMs' | 'backoffCapMs' | 'retryWindowHours' | 'retentionDays'
>;

export interface OutboxDrainerOptions {
  ledger: Ledger;
  sender: OutboxSender;
  /** The `store` section of the configuration. */
  store: DrainerStoreConfig;
  logger?: Logger;
  now?: () => number;
  /** [0, 1), for the jitter. */
  random?: () => number;
  timers?: LedgerTimers;
  /** Longest sleep when nothing is due (rows retried by hand from the CLI are seen within this). */
  idlePollMs?: number;
  /** How often retention pruning runs. */
  pruneEveryMs?: number;
  onDelivered?: (row: OutboxRow) => void;
  /** The alarm for a dead-lettered row (also logged at error level with code OUTBOX_DEAD_LETTER). */
  onDeadLetter?: (row: OutboxRow, error: string) => void;
  /** Notices wall-clock steps (docs/decisions/hardening.md item 6); persisted due times are re-based on each. */
  clockSteps?: ClockStepDetector;
  /** Told about each step after the re-base (the payment worker logs it as CLOCK_STEP). */
  onClockStep?: (step: ClockStep, rowsRebased: number) => void;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export class OutboxDrainer {
  private readonly ledger: Ledger;
  private readonly sender: OutboxSender;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly timers: LedgerTimers;
  private readonly policy: BackoffPolicy;
  private readonly concurrency: number;
  private readonly retentionMs: number;
  private readonly idlePollMs: number;
  private readonly pruneEveryMs: number;
  private readonly inFlight = new Map<string, Promise<void>>(); // by TransactionId
  private timer: unknown = null;
  private running = false;
  private lastPruneMs = -Infinity;
  private unsubscribe: Array<() => void> = [];
  /** Sum of the clock steps re-based so far: rows read before a step are corrected by the difference. */
  private steppedMs = 0;

  constructor(private readonly options: OutboxDrainerOptions) {
    this.ledger = options.ledger;
    this.sender = options.sender;
    this.logger = options.logger ?? silentLogger();
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.timers = options.timers ?? realTimers;
    this.concurrency = options.store.concurrency;
    this.policy = {
      baseMs: options.store.backoffBaseMs,
      capMs: options.store.backoffCapMs,
      windowMs: options.store.retryWindowHours * HOUR_MS,
    };
    this.retentionMs = options.store.retentionDays * DAY_MS;
    this.idlePollMs = options.idlePollMs ?? 30_000;
    this.pruneEveryMs = options.pruneEveryMs ?? HOUR_MS;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    try {
      const clamped = this.ledger.outbox.clampFuture(this.now(), this.policy.capMs);
      if (clamped > 0)
        this.logger.warn(
          { code: ErrorCodes.CLOCK_STEP, rows: clamped },
          'outbox rows due in the future beyond the longest backoff (the clock went back while stopped): pulled in ' +
            'to now',
        );
    } catch (err) {
      this.logger.error(
        { code: ErrorCodes.LEDGER_WRITE_FAILED, err: describeError(err) },
        'outbox drainer could not re-base due times at start',
      );
    }
    // Woken by new rows and by the disk coming back, besides its own timer.
    this.unsubscribe = [
      this.ledger.onWritability((writable) => {
        if (writable) this.kick();
      }),
      this.ledger.onEnqueued(() => this.kick()),
    ];
    this.pump();
  }

  /** New rows were enqueued (or the network is back): look now instead of at the next timer. */
  kick(): void {
    if (this.running) this.pump();
  }

  /** Stops taking rows and waits for the requests in flight to finish and be recorded. */
  async stop(): Promise<void> {
    this.running = false;
    this.clearTimer();
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Resolves once nothing is in flight and nothing is due now (tests, shutdown, the CLI). */
  async whenIdle(): Promise<void> {
    for (;;) {
      if (this.inFlight.size > 0) {
        await Promise.allSettled([...this.inFlight.values()]);
        continue;
      }
      if (!this.running || !this.ledger.writable) return;
      this.pump();
      if (this.inFlight.size === 0) return;
    }
  }

  /** Health: pending, dead and the oldest pending enqueue time. */
  counts(): OutboxCounts {
    return this.ledger.outbox.counts();
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Removes delivered rows (and closed histories) older than the retention. */
  prune(): { outboxRows: number; transactions: number } {
    const nowMs = this.now();
    this.lastPruneMs = nowMs;
    const pruned = this.ledger.outbox.prune(nowMs, this.retentionMs);
    if (pruned.outboxRows > 0 || pruned.transactions > 0)
      this.logger.info(pruned, 'outbox retention: pruned delivered rows and closed transactions');
    return pruned;
  }

  /** Re-bases persisted due times when the wall clock stepped since the last look. */
  observeClock(): void {
    const step = this.options.clockSteps?.check() ?? null;
    if (step === null) return;
    let rows = 0;
    try {
      rows = this.ledger.outbox.rebase(step.stepMs);
      this.steppedMs += step.stepMs;
    } catch (err) {
      this.logger.error(
        { code: ErrorCodes.LEDGER_WRITE_FAILED, err: describeError(err) },
        'outbox drainer could not re-base due times after a clock step',
      );
    }
    this.options.onClockStep?.(step, rows);
  }

  private pump(): void {
    if (!this.running) return;
    this.clearTimer();
    if (!this.ledger.writable) return; // the writability listener kicks when the disk is back
    this.observeClock();
    const nowMs = this.now();
    try {
      if (nowMs - this.lastPruneMs >= this.pruneEveryMs) this.prune();
      const free = this.concurrency - this.inFlight.size;
      if (free > 0) {
        for (const row of this.ledger.outbox.due(nowMs, free, [...this.inFlight.keys()])) this.send(row);
      }
      if (this.inFlight.size < this.concurrency) {
        const next = this.ledger.outbox.nextDueAtMs([...this.inFlight.keys()]);
        this.schedule(next === null ? this.idlePollMs : Math.min(Math.max(next - nowMs, 0), this.idlePollMs));
      }
    } catch (err) {
      this.logger.error(
        { code: ErrorCodes.LEDGER_WRITE_FAILED, err: describeError(err) },
        'outbox drainer could not read or prune the ledger; retrying later',
      );
      this.schedule(this.idlePollMs);
    }
  }

  private send(row: OutboxRow): void {
    const done = this.attempt(row, this.steppedMs).finally(() => {
      this.inFlight.delete(row.txId);
      this.pump();
    });
    this.inFlight.set(row.txId, done);
  }

  private async attempt(row: OutboxRow, steppedAtRead: number): Promise<void> {
    let outcome: GatewayOutcome<unknown>;
    try {
      outcome = await this.sender.sendRaw(row.op, row.body);
    } catch (err) {
      // The client reports failures as outcomes; a throw is a bug, treated like a lost request.
      outcome = {
        kind: 'transport',
        failure: 'reset',
        detail: `sender threw: ${describeError(err)}`,
        httpStatus: null,
        elapsedMs: 0,
      };
    }
    this.observeClock();
    const nowMs = this.now();
    // A step while the request was out moved the row's window in the ledger; move this copy too.
    const windowStartedAtMs = row.windowStartedAtMs + (this.steppedMs - steppedAtRead);
    const verdict = judgeAttempt(outcome, this.policy, row.attempts + 1, windowStartedAtMs, nowMs, this.random);
    try {
      switch (verdict.kind) {
        case 'delivered':
          this.ledger.outbox.markDelivered(row, nowMs);
          this.logger.info(
            { outboxId: row.id, txId: row.txId, op: row.op, attempts: row.attempts + 1 },
            'outbox request delivered',
          );
          this.options.onDelivered?.(row);
          break;
        case 'retry':
          this.ledger.outbox.reschedule(row, nowMs, verdict.atMs, verdict.error, verdict.code);
          this.logger.debug(
            { outboxId: row.id, txId: row.txId, op: row.op, error: verdict.error, nextAttemptAtMs: verdict.atMs },
            'outbox request will be retried',
          );
          break;
        case 'dead':
          this.ledger.outbox.deadLetter(row, nowMs, verdict.error, verdict.code);
          this.logger.error(
            {
              code: ErrorCodes.OUTBOX_DEAD_LETTER,
              outboxId: row.id,
              txId: row.txId,
              op: row.op,
              error: verdict.error,
              declineCode: verdict.code,
            },
            'outbox request dead-lettered: reconcile it with the gateway by hand (`qrvend outbox --dead`, then ' +
              '`qrvend outbox retry <id>` if it must be sent again)',
          );
          this.options.onDeadLetter?.(row, verdict.error);
          break;
      }
    } catch (err) {
      // The row stays pending as it was; it is sent again later (the gateway de-duplicates retries).
      this.logger.error(
        { code: ErrorCodes.LEDGER_WRITE_FAILED, outboxId: row.id, txId: row.txId, err: describeError(err) },
        'could not record an outbox result',
      );
    }
  }

  private schedule(delayMs: number): void {
    this.clearTimer();
    if (!this.running) return;
    this.timer = this.timers.setTimeout(() => {
      this.timer = null;
      this.pump();
    }, delayMs);
  }

  private clearTimer(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }
}
