/**
 * How the console rides out a broker restart and a database restart (docs/console.md "Faults"):
 * it reconnects to the broker by itself with a bounded backoff, and it says once when the broker
 * or the database went away and once when it is back, in lines a technician can act on, instead
 * of a line per message.
 */
import type { MqttClient } from 'mqtt';
import type { Logger } from '../../core/log.js';
import { databaseUnavailable } from '../store/event-batch.js';

/** The longest wait between two reconnects to the broker, whatever reconnectMs says. */
export const MAX_RECONNECT_MS = 30_000;

/** The wait before the next reconnect: doubled after each failed one, from `baseMs` up to the bound. */
export function nextReconnectMs(currentMs: number, baseMs: number): number {
  return Math.min(Math.max(currentMs * 2, baseMs), Math.max(baseMs, MAX_RECONNECT_MS));
}

/** Whether the database takes commits: one line when it stops, one when it is back. */
export class StoreHealth {
  private failedSince: number | null = null;
  /** Commits (transactions, each a batch of up to ingest.batchEvents messages) that failed; the
   * messages are counted in the ingest's counters.failedMessages. */
  private failures = 0;

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get down(): boolean {
    return this.failedSince !== null;
  }

  /** A commit failed; the event is not acknowledged and comes again after the reconnect. */
  failed(err: unknown, reconnectMs: number): void {
    this.failures++;
    if (this.failedSince !== null) return;
    this.failedSince = this.now();
    const retry = `retrying on its own every ${reconnectMs / 1000} s to ${MAX_RECONNECT_MS / 1000} s`;
    const code = (err as { code?: unknown } | null)?.code;
    const fields = { code: 'CONSOLE_STORE_FAILED', err: (err as Error)?.message ?? String(err), dbCode: code };
    if (databaseUnavailable(err)) {
      this.log.error(
        fields,
        'console database unreachable (or refusing writes): nothing is acknowledged, the events wait on the ' +
          `broker; ${retry}. Check that the database server runs and has disk space (docs/console.md "Faults")`,
      );
    } else {
      // Not a data error (those are counted as refused and acknowledged) nor a lost database:
      // a failure of the console's own writes, e.g. a schema changed under it or a deadlock.
      this.log.error(
        fields,
        'a console database write failed with an error that is neither bad data nor a lost connection: ' +
          `nothing is acknowledged, the messages wait on the broker; ${retry}. Check the database's log ` +
          'for this error (docs/console.md "Faults")',
      );
    }
  }

  /** A commit went through. */
  committed(): void {
    if (this.failedSince === null) return;
    const downS = Math.round((this.now() - this.failedSince) / 1000);
    this.log.warn(
      { event: 'console.store.back', downS, failedCommits: this.failures },
      `console database reachable again after ${downS} s (${this.failures} commits failed, none acknowledged)`,
    );
    this.failedSince = null;
    this.failures = 0;
  }
}

/**
 * Logs the broker link going and coming back, and spaces the reconnects: `baseMs` after a loss,
 * doubled while the broker (or, behind it, the database) keeps failing, reset once the link
 * holds and the database takes commits.
 */
export function watchBrokerLink(client: MqttClient, baseMs: number, log: Logger, store: StoreHealth): void {
  let up = true;
  let announced = false;
  let lostAt = 0;
  client.on('close', () => {
    // A connection the console dropped itself after a failed commit is not news: the store said so.
    if (up && !store.down) {
      announced = true;
      lostAt = performance.now();
      log.warn(
        { event: 'console.broker.lost' },
        `broker connection lost: reconnecting on its own every ${baseMs / 1000} s to ` +
          `${MAX_RECONNECT_MS / 1000} s; the events wait in the console's session on the broker`,
      );
    } else {
      client.options.reconnectPeriod = nextReconnectMs(client.options.reconnectPeriod ?? baseMs, baseMs);
    }
    up = false;
  });
  client.on('connect', (connack) => {
    up = true;
    if (!store.down) client.options.reconnectPeriod = baseMs;
    if (!announced) return;
    announced = false;
    const awayS = Math.round((performance.now() - lostAt) / 1000);
    log.info(
      { event: 'console.broker.back', sessionPresent: connack.sessionPresent, awayS },
      `broker connection back after ${awayS} s`,
    );
  });
}
