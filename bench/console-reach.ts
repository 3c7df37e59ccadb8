/**
 * The console's reach (docs/console.md "Measured"): the read API's sales endpoint over the bench's
 * seeded year (1,095,000 sales; p95 of full HTTP requests with a token: a period's first pages,
 * pages deep into a quarter by cursor, one machine's year), and the event feed's lag at 2,000
 * events/s: sale events committed 100 every 50 ms as ingest commits them, a delivery worker
 * sending the feed to a receiver on loopback, the lag of each event from its commit to its
 * arrival. Durations on the monotonic clock.
 */
import { createServer } from 'node:http';
import { silentLogger } from '../src/core/log.js';
import { DeliveryWorker } from '../src/console/deliveries/worker.js';
import { newWebhookSecret } from '../src/console/deliveries/signing.js';
import { storeEventBatch } from '../src/console/store/event-batch.js';
import { createToken } from '../src/console/store/token-queries.js';
import { addEndpoint } from '../src/console/store/webhook-queries.js';
import type { FleetEvent } from '../src/fleet/contract/index.js';
import { openTestStore, type TestStore } from '../test/console/support/store.js';
import { WebClient } from '../test/console/support/web-client.js';
import { FIRST_DAY, SEED, SEED_SALES } from './console-seed.js';
import { measured, notMeasured, type Figure } from './figure.js';
import { percentile, summarize } from './stats.js';

export const API_SALES = {
  id: 'console-api-sales-p95',
  what: `API /api/v1/sales over ${SEED_SALES} sales`,
  unit: 'ms (p95)',
  target: { text: 'p95 <= 200 ms', checks: [{ stat: 'value' as const, op: '<=' as const, limit: 200 }] },
};

export const FEED_LAG = {
  id: 'console-feed-lag-p95',
  what: 'Event feed lag at 2,000 events/s (commit to a receiver on loopback)',
  unit: 'ms (p95)',
  target: { text: 'p95 <= 1,000 ms, none lost', checks: [{ stat: 'value' as const, op: '<=' as const, limit: 1000 }] },
};

function p95(samples: number[]) {
  return {
    samples: samples.length,
    summary: summarize(samples),
    value: percentile(
      [...samples].sort((a, b) => a - b),
      0.95,
    ),
  };
}

const machineOf = (i: number) => `vm-${(i * 7) % SEED.sellingMachines}`;

/** The sales endpoint over the seeded store, through a console already serving it. */
export async function apiSalesFigure(store: TestStore, url: string, requests: number): Promise<Figure> {
  const token = await createToken(store.db, 'bench', 'bench', new Date().toISOString());
  const client = new WebClient(url);
  const auth = { authorization: `Bearer ${token}` };
  const quarter = new Date(Date.parse(SEED.lastDay) - 90 * 86_400_000).toISOString().slice(0, 10);
  let cursor: string | null = null;
  const samples: number[] = [];
  for (let i = 0; i < requests; i++) {
    let path: string;
    if (i % 3 === 0) path = `/api/v1/sales?from=${FIRST_DAY}&to=${SEED.lastDay}&limit=100`;
    else if (i % 3 === 1)
      path = `/api/v1/sales?from=${quarter}&to=${SEED.lastDay}&limit=100${cursor ? `&cursor=${cursor}` : ''}`;
    else path = `/api/v1/sales?from=${FIRST_DAY}&to=${SEED.lastDay}&machine=${machineOf(i)}&limit=100`;
    const t = performance.now();
    const res = await client.request(path, { headers: auth });
    samples.push(performance.now() - t);
    if (res.status !== 200) return notMeasured(API_SALES, 'error', `${res.status} for ${path}`);
    if (i % 3 === 1) cursor = (JSON.parse(res.text) as { nextCursor: string | null }).nextCursor;
  }
  return measured({ ...API_SALES, context: { requests, sales: SEED_SALES } }, p95(samples));
}

function sale(i: number): { machineId: string; event: FleetEvent; receivedAt: string; raw: string } {
  const machineId = `vm-${i % 100}`;
  const event = {
    kind: 'sale',
    eventId: `f-${i}`,
    at: new Date().toISOString(),
    machineId,
    txId: `t-${i}`,
    flow: 'static',
    amount: '1.00',
    currency: 'EUR',
    products: [],
    closing: 'settlement',
    verdict: 'accepted',
  } as FleetEvent;
  return { machineId, event, receivedAt: event.at, raw: JSON.stringify(event) };
}

/** `seconds` of 2,000 events/s committed and fed to a receiver; the lag of each event. */
export async function feedLagFigure(seconds = 10): Promise<Figure> {
  const store = await openTestStore('sqlite');
  const committedAt = new Map<number, number>();
  const lags: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { events: { eventId: string }[] } };
      for (const e of body.data.events) {
        const at = committedAt.get(Number(e.eventId.slice(2)));
        if (at !== undefined) lags.push(now - at);
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const worker = new DeliveryWorker({
    db: store.db,
    dialect: store.dialect,
    instance: 'bench',
    log: silentLogger(),
    mailer: null,
    post: { policy: { allowPrivate: false }, timeoutMs: 15_000, ca: null },
    pollMs: 500,
    concurrency: 4,
    leaseMs: 70_000,
    publicUrl: null,
  });
  try {
    const url = `http://127.0.0.1:${port}/feed`;
    await addEndpoint(
      store.db,
      { owner: 'bench', url, secret: newWebhookSecret(), events: true, alerts: false, from: 'now' },
      '',
    );
    worker.start();
    const total = seconds * 2000;
    const started = performance.now();
    for (let n = 0; n < total; n += 100) {
      const due = started + (n / 2000) * 1000;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await storeEventBatch(
        store.db,
        Array.from({ length: 100 }, (_, j) => sale(n + j)),
      );
      const now = performance.now();
      for (let j = 0; j < 100; j++) committedAt.set(n + j, now);
      // As ingest does after each commit (src/console/run.ts).
      worker.nudge();
    }
    const rate = total / ((performance.now() - started) / 1000);
    const until = performance.now() + 30_000;
    while (lags.length < total && performance.now() < until) await new Promise((r) => setTimeout(r, 20));
    const base = {
      ...FEED_LAG,
      context: { events: total, received: lags.length, ingestRate: Math.round(rate) },
      detail: `${lags.length} of ${total} events received; committed at ${Math.round(rate)} events/s`,
    };
    if (lags.length < total)
      return notMeasured(base, 'error', `${total - lags.length} events not received within 30 s`);
    return measured(base, p95(lags));
  } finally {
    await worker.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store.remove();
  }
}
