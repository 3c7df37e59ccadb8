/**
 * The delivery worker, one per console instance (docs/console.md "Deliveries"): it queues the
 * event feed's next batches, claims due deliveries from the database queue (one instance per
 * delivery at a time, ../store/delivery-queue.ts) and tries them: webhooks signed per Standard
 * Webhooks with the delivery's id on every attempt, e-mail through the operator's SMTP server
 * with that id as its Message-ID. A failure is tried again on the backoff schedule
 * (./backoff.ts); when a delivery's last attempt fails it is given up and its endpoint disabled,
 * with a notice to the endpoint's owner. Times come from `clock` (injected in tests).
 */
import type { Kysely } from 'kysely';
import type { Logger } from '../../core/log.js';
import {
  claimDue,
  logAttempt,
  markDelivered,
  markFailed,
  pruneDeliveries,
  release,
  type AttemptRecord,
  type Delivery,
} from '../store/delivery-queue.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { advanceFeed, findEndpoint } from '../store/webhook-queries.js';
import { retryDelayMs } from './backoff.js';
import type { Mailer } from './email.js';
import { DEFAULT_FEED_BATCH, queueFeedBatches, type FeedBatchLimits } from './feed-batches.js';
import { endpointDisabled } from './notices.js';
import { checkReceiverUrl } from './receiver-address.js';
import { postWebhook, type PostOptions } from './webhook-post.js';
import { webhookHeaders } from './signing.js';

export interface DeliveryWorkerOptions {
  db: Kysely<ConsoleDatabase>;
  dialect: 'sqlite' | 'postgres';
  /** This instance's name, in the delivery log. */
  instance: string;
  log: Logger;
  /** Wall-clock milliseconds (Date.now unless a test injects one). */
  clock?: () => number;
  mailer: Mailer | null;
  post: PostOptions;
  /** How often the queue is looked at when it was empty. */
  pollMs: number;
  /** Deliveries tried at once by this instance. */
  concurrency: number;
  /** How long a claim holds: longer than an attempt can take. */
  leaseMs: number;
  feedBatch?: FeedBatchLimits;
  /** The console's address as the operator reaches it, for links in notices. */
  publicUrl: string | null;
  /** How long delivered and given-up deliveries stay in the log. */
  keepMs?: number;
}

interface Outcome {
  ok: boolean;
  status: number | null;
  error: string | null;
  durationMs: number;
}

const DAY_MS = 86_400_000;

export class DeliveryWorker {
  private readonly clock: () => number;
  private closed = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  private lastPrune = 0;
  private lastFailureLog = -Infinity;
  /** Deliveries whose outcome this instance wrote, and attempts whose claim was lost meanwhile. */
  readonly counters = { attempts: 0, delivered: 0, failed: 0, givenUp: 0, claimLost: 0 };

  constructor(private readonly o: DeliveryWorkerOptions) {
    this.clock = o.clock ?? Date.now;
  }

  /** Runs until close(): a round, then the next at once if it found work, else after pollMs or a nudge. */
  start(): void {
    this.loop ??= (async () => {
      while (!this.closed) {
        let worked = 0;
        try {
          worked = await this.runOnce();
        } catch (err) {
          // While the database is away every round fails: one line a minute, not one a poll.
          const now = performance.now();
          if (now - this.lastFailureLog > 60_000) {
            this.lastFailureLog = now;
            this.o.log.warn({ err: (err as Error).message }, 'deliveries: a round failed; trying again');
          }
        }
        if (worked === 0 && !this.closed) await this.pause();
      }
    })();
  }

  /** Something was stored or queued: look at the queue now rather than at the next poll. */
  nudge(): void {
    this.wake?.();
  }

  private pause(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.o.pollMs);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }

  /** One round: queue feed batches, claim what is due, try it. Returns the number of attempts made. */
  async runOnce(): Promise<number> {
    const now = this.clock();
    await queueFeedBatches(this.o.db, this.o.feedBatch ?? DEFAULT_FEED_BATCH, now);
    const claim = await claimDue(this.o.db, this.o.dialect, now, this.o.concurrency, this.o.leaseMs);
    await Promise.all(claim.deliveries.map((d) => this.attempt(d, claim.token)));
    if (now - this.lastPrune > 3_600_000) {
      this.lastPrune = now;
      await pruneDeliveries(this.o.db, now - (this.o.keepMs ?? 7 * DAY_MS));
    }
    return claim.deliveries.length;
  }

  private async attempt(d: Delivery, token: string): Promise<void> {
    const atMs = this.clock();
    let outcome: Outcome;
    if (d.channel === 'email') outcome = await this.sendEmail(d);
    else {
      const endpoint = d.endpoint_id === null ? null : await findEndpoint(this.o.db, d.endpoint_id);
      if (endpoint === null || endpoint.enabled !== 1) return release(this.o.db, d.id, token);
      outcome = await this.sendWebhook(d, endpoint.url, endpoint.secret, atMs);
    }
    this.counters.attempts++;
    await this.record({ delivery: d, token, instance: this.o.instance, atMs, ...outcome }, outcome.ok);
  }

  private async sendWebhook(d: Delivery, url: string, secret: string, atMs: number): Promise<Outcome> {
    try {
      checkReceiverUrl(url, this.o.post.policy);
    } catch (err) {
      return { ok: false, status: null, error: (err as Error).message, durationMs: 0 };
    }
    const headers = webhookHeaders(secret, d.id, Math.floor(atMs / 1000), d.payload);
    return postWebhook(url, headers, d.payload, this.o.post);
  }

  private async sendEmail(d: Delivery): Promise<Outcome> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    if (this.o.mailer === null) {
      return {
        ok: false,
        status: null,
        error: 'e-mail is not configured (email in the console configuration)',
        durationMs: 0,
      };
    }
    try {
      const { subject, text } = JSON.parse(d.payload) as { subject: string; text: string };
      await this.o.mailer.send({ id: d.id, to: d.recipient ?? '', subject, text });
      return { ok: true, status: null, error: null, durationMs: took() };
    } catch (err) {
      const e = err as Error & { responseCode?: number; code?: string };
      return {
        ok: false,
        status: e.responseCode ?? null,
        error: `${e.code ?? 'SMTP'}: ${e.message}`,
        durationMs: took(),
      };
    }
  }

  /** Writes the attempt and its outcome, under the claim that made it. */
  private async record(a: AttemptRecord, ok: boolean): Promise<void> {
    const d = a.delivery;
    const next = ok ? null : retryDelayMs(d.attempts + 1);
    const ours = await this.o.db.transaction().execute(async (tx) => {
      await logAttempt(tx, a);
      if (ok) {
        if (!(await markDelivered(tx, a))) return false;
        if (d.kind === 'events' && d.endpoint_id !== null && d.feed_from !== null && d.feed_to !== null) {
          await advanceFeed(tx, d.endpoint_id, d.feed_from, d.feed_to);
        }
        return true;
      }
      if (!(await markFailed(tx, a, next === null ? null : a.atMs + next))) return false;
      if (next === null && d.endpoint_id !== null) await endpointDisabled(tx, d, a, this.o.publicUrl);
      return true;
    });
    if (!ours) {
      this.counters.claimLost++;
      this.o.log.warn(
        { delivery: d.id },
        'deliveries: a claim ran out before its attempt ended; another instance has it',
      );
      return;
    }
    if (ok) this.counters.delivered++;
    else if (next === null) {
      this.counters.givenUp++;
      this.o.log.warn(
        { delivery: d.id, endpoint: d.endpoint_id, error: a.error },
        'deliveries: given up after its last attempt',
      );
    } else this.counters.failed++;
    if (ok && d.kind === 'events') this.nudge();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.loop;
  }
}
