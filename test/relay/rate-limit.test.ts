/**
 * The relay's per-source rate limit (the machine's token bucket): keyed by the peer address, or by
 * the last X-Forwarded-For entry only when relay.trustForwardedFor is set (behind a load balancer).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { createRelayRig } from './support/relay-rig.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

function post(origin: string, forwardedFor: string): Promise<number> {
  const body = JSON.stringify({
    AppUserId: 'u',
    SecretToken: 'x'.repeat(64),
    TerminalId: 'NOBODY',
    TransactionId: 'tx-rate-0001',
  });
  return new Promise((resolve, reject) => {
    const req = request(
      new URL('/payment/v2/transactions/Gateway/w/start', origin),
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-forwarded-for': forwardedFor,
        },
        timeout: 5_000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

test(
  'rate limit per source: the peer address, or the forwarded address behind a trusted load balancer',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const rig = await createRelayRig();
    try {
      const trusting = await rig.startRelay({ rateLimit: { perSecond: 1, burst: 1 }, trustForwardedFor: true });
      assert.equal(await post(trusting.origin, '10.0.0.1, 198.51.100.7'), 200);
      assert.equal(await post(trusting.origin, '10.0.0.1, 198.51.100.7'), 429);
      assert.equal(
        await post(trusting.origin, '198.51.100.8'),
        200,
        'another wallet behind the same balancer is served',
      );

      const plain = await rig.startRelay({ rateLimit: { perSecond: 1, burst: 1 } });
      assert.equal(await post(plain.origin, '198.51.100.9'), 200);
      assert.equal(
        await post(plain.origin, '198.51.100.10'),
        429,
        'a forged X-Forwarded-For does not buy a new bucket',
      );
    } finally {
      await rig.close();
    }
  },
);
