/**
 * The console's reach (docs/console.md "Alert rules", "E-mail", "Webhooks"): the alert evaluator
 * and the delivery worker of this instance, from its settings. Every instance runs both: the
 * evaluator works only while it holds the lease, the worker claims deliveries from the shared
 * queue.
 */
import type { Logger } from '../core/log.js';
import { readPemFile } from '../core/pem-file.js';
import { AlertEvaluator } from './alerts/evaluator.js';
import type { ConsoleSettings } from './config.js';
import { createMailer, type Mailer } from './deliveries/email.js';
import { DeliveryWorker } from './deliveries/worker.js';
import type { PostOptions } from './deliveries/webhook-post.js';
import type { ConsoleStore } from './store/open.js';

export interface Reach {
  /** How this instance posts webhooks (the pages check a new receiver so). */
  post: PostOptions;
  worker: DeliveryWorker;
  evaluator: AlertEvaluator;
  mailer: Mailer | null;
  close(): Promise<void>;
}

type ReachSettings = Pick<ConsoleSettings, 'instance' | 'publicUrl' | 'email' | 'webhooks' | 'deliveries' | 'alerts'>;

/** Builds the worker and evaluator; `start` runs them (tests drive `runOnce` instead). */
export function createReach(settings: ReachSettings, store: ConsoleStore, log: Logger, clock?: () => number): Reach {
  const mailer = settings.email === null ? null : createMailer(settings.email);
  const ca =
    settings.webhooks.caFile === null ? null : readPemFile(settings.webhooks.caFile, 'certificates', 'webhooks.caFile');
  const post: PostOptions = {
    policy: { allowPrivate: settings.webhooks.allowPrivateNetworks },
    timeoutMs: settings.webhooks.timeoutS * 1000,
    ca,
  };
  const worker = new DeliveryWorker({
    db: store.db,
    dialect: store.dialect,
    instance: settings.instance,
    log,
    clock,
    mailer,
    post,
    pollMs: settings.deliveries.pollMs,
    concurrency: settings.deliveries.concurrency,
    // An attempt takes at most the webhook timeout (or the SMTP one): the claim outlasts either.
    leaseMs: Math.max(settings.webhooks.timeoutS, settings.email?.timeoutS ?? 0) * 4000 + 10_000,
    publicUrl: settings.publicUrl,
  });
  const evaluator = new AlertEvaluator({
    db: store.db,
    instance: settings.instance,
    log,
    clock,
    everyMs: settings.alerts.everyS * 1000,
    publicUrl: settings.publicUrl,
    queued: () => worker.nudge(),
  });
  return {
    post,
    worker,
    evaluator,
    mailer,
    close: async () => {
      await evaluator.close();
      await worker.close();
      mailer?.close();
    },
  };
}
