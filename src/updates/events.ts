/**
 * The one way to publish an `update` event (docs/decisions/remote-updates.md): from any thread, a message to the
 * payment worker, which queues it durably in the ledger's event queue like an alarm (published,
 * and kept until the broker acknowledged it). The fleet worker sends its own as
 * `fleet.update.event`; the main thread (the trial, the rollback report) sends this.
 */
import type { MainToPayment, UpdateEventFacts } from '../ipc/messages.js';

export function publishUpdateEvent(
  toPayment: (message: MainToPayment) => void,
  state: UpdateEventFacts['state'],
  version: string,
  detail: string | null,
  options: { rolloutId?: string | null; progress?: UpdateEventFacts['progress'] } = {},
): void {
  toPayment({
    type: 'update.event',
    event: { version, state, rolloutId: options.rolloutId ?? null, progress: options.progress ?? null, detail },
  });
}
