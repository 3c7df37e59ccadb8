/**
 * What the console tells an endpoint's owner when it gives a delivery up (docs/console.md
 * "Webhooks"): the endpoint is disabled, its deliveries wait, and the owner gets an e-mail
 * (when their account has an address) saying which endpoint, since when it fails, the last error
 * and where to enable it again. Written in the transaction that gives the delivery up.
 */
import type { Transaction } from 'kysely';
import { enqueue, type AttemptRecord, type Delivery } from '../store/delivery-queue.js';
import type { ConsoleDatabase } from '../store/schema.js';
import { disableEndpoint, findEndpoint } from '../store/webhook-queries.js';
import { MAX_ATTEMPTS } from './backoff.js';
import { newMessageId } from './signing.js';

export async function endpointDisabled(
  tx: Transaction<ConsoleDatabase>,
  d: Delivery,
  a: AttemptRecord,
  publicUrl: string | null,
): Promise<void> {
  if (d.endpoint_id === null) return;
  const endpoint = await findEndpoint(tx, d.endpoint_id);
  if (endpoint === null) return;
  const hours = ((a.atMs - d.created_ms) / 3_600_000).toFixed(1);
  const reason = `disabled after ${MAX_ATTEMPTS} failed attempts over ${hours} h; last: ${a.error ?? 'no answer'}`;
  await disableEndpoint(tx, endpoint.id, reason);
  const owner = await tx.selectFrom('users').select('email').where('name', '=', endpoint.owner).executeTakeFirst();
  if (owner?.email === null || owner?.email === undefined) return;
  const link = `${publicUrl ?? ''}/webhooks/${endpoint.id}`;
  const text = [
    `The console stopped sending to webhook endpoint ${endpoint.id}: ${endpoint.url}`,
    '',
    `Why: ${reason}.`,
    `Since: ${new Date(d.created_ms).toISOString()} (the first attempt of delivery ${d.id}).`,
    '',
    'What to do: check that the receiver runs and answers 2xx, then enable the endpoint again on its page.',
    'Its deliveries wait meanwhile; the event feed resumes where it stopped, with the same webhook-id.',
    '',
    link,
  ].join('\n');
  await enqueue(
    tx,
    {
      id: newMessageId(),
      channel: 'email',
      kind: 'notice',
      recipient: owner.email,
      owner: endpoint.owner,
      payload: JSON.stringify({ subject: `qrvend console: webhook endpoint ${endpoint.id} disabled`, text }),
    },
    a.atMs,
  );
}
