/**
 * Whether the gateway answers, as the journal tells it (docs/decisions/smallest-boards.md item 6: with an empty CA file
 * a
 * Settlement sat through 9 failed attempts over 3.5 minutes with nothing in the journal, because
 * every retry is logged at debug). Every gateway call's outcome is observed: an answer (approved
 * or declined) means reachable, a transport failure (no connection, TLS refused, timeout, a
 * status other than 200, an unreadable answer) means not. The change to unreachable is a warn
 * line with the reason, the way back an info line with how long it lasted; while it lasts, one
 * reminder per `reminderMs`. Both changes go through RepeatedLog, so a gateway that flaps cannot
 * flood the journal. Durations are on the monotonic clock.
 */
import { performance } from 'node:perf_hooks';
import { ErrorCodes } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { RepeatedLog } from '../core/log-limiter.js';
import type { GatewayOperation, GatewayOutcome } from './outcome.js';

export interface ReachabilityOptions {
  log: Pick<Logger, 'warn' | 'info'>;
  /** At most one line per change of state per this long (the rest are counted). */
  repeatIntervalMs?: number;
  /** While unreachable, a reminder at most this often. */
  reminderMs?: number;
  now?: () => number;
}

const HINT = 'payments are kept and retried; check the network, gateway.baseUrl and gateway.caFile (`qrvend doctor`)';

export class GatewayReachability {
  private down: { sinceMs: number; failures: number; lastReminderMs: number } | null = null;
  private readonly now: () => number;
  private readonly reminderMs: number;
  private readonly wentDown: RepeatedLog;
  private readonly cameBack: RepeatedLog;

  constructor(private readonly options: ReachabilityOptions) {
    this.now = options.now ?? (() => performance.now());
    this.reminderMs = options.reminderMs ?? 10 * 60_000;
    const intervalMs = options.repeatIntervalMs ?? 60_000;
    const { log } = options;
    const repeated = (n: number) => (n > 0 ? { repeated: n } : {});
    this.wentDown = new RepeatedLog({
      intervalMs,
      now: this.now,
      write: (fields, n) =>
        log.warn(
          { event: 'gateway.unreachable', code: ErrorCodes.GATEWAY_UNREACHABLE, ...fields, ...repeated(n) },
          `gateway unreachable (${String(fields.reason)}): ${HINT}`,
        ),
    });
    this.cameBack = new RepeatedLog({
      intervalMs,
      now: this.now,
      write: (fields, n) =>
        log.info({ event: 'gateway.reachable', ...fields, ...repeated(n) }, 'gateway reachable again'),
    });
  }

  /** True while the last call got no answer. */
  get unreachable(): boolean {
    return this.down !== null;
  }

  observe(op: GatewayOperation, outcome: GatewayOutcome<unknown>): void {
    const nowMs = this.now();
    if (outcome.kind !== 'transport') {
      if (this.down === null) return;
      const { sinceMs, failures } = this.down;
      this.down = null;
      this.cameBack.add({ op, downForS: Math.round((nowMs - sinceMs) / 1000), failedCalls: failures });
      return;
    }
    const reason = `${outcome.failure}: ${outcome.detail}`.slice(0, 300);
    if (this.down === null) {
      this.down = { sinceMs: nowMs, failures: 1, lastReminderMs: nowMs };
      this.wentDown.add({ op, failure: outcome.failure, reason });
      return;
    }
    this.down.failures += 1;
    if (nowMs - this.down.lastReminderMs >= this.reminderMs) {
      this.down.lastReminderMs = nowMs;
      this.options.log.warn(
        {
          event: 'gateway.unreachable',
          code: ErrorCodes.GATEWAY_UNREACHABLE,
          op,
          failure: outcome.failure,
          reason,
          downForS: Math.round((nowMs - this.down.sinceMs) / 1000),
          failedCalls: this.down.failures,
        },
        `gateway still unreachable (${reason}): ${HINT}`,
      );
    }
  }
}
