/**
 * Standard Webhooks signatures (docs/console.md "Webhooks"): the secret is `whsec_` and a
 * base64 key; the signature is `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under that
 * key, in `webhook-signature`, beside `webhook-id` and `webhook-timestamp` (seconds). Written
 * with node:crypto rather than the standardwebhooks package: it is a few lines, and the tests
 * verify with that package, an implementation that is not ours, which a shared library would not
 * prove.
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new endpoint secret: 32 random bytes. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** The three headers of one attempt; the id is the delivery's, the same on every retry. */
export function webhookHeaders(secret: string, id: string, timestampS: number, body: string): Record<string, string> {
  const signature = createHmac('sha256', keyOf(secret)).update(`${id}.${timestampS}.${body}`).digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': `v1,${signature}`,
  };
}

/** A delivery's id: `msg_` and 24 random characters (base64url). */
export function newMessageId(): string {
  return `msg_${randomBytes(18).toString('base64url')}`;
}
