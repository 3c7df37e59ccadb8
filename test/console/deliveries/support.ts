/** A delivery worker on a test store, with an injected clock the test moves. */
import { silentLogger } from '../../../src/core/log.js';
import { DeliveryWorker, type DeliveryWorkerOptions } from '../../../src/console/deliveries/worker.js';
import type { ConsoleStore } from '../../../src/console/store/open.js';
import type { FleetEvent } from '../../../src/fleet/contract/index.js';
import type { IncomingEvent } from '../../../src/console/store/ingest-queries.js';

export class TestClock {
  constructor(public ms = Date.parse('2026-12-01T09:00:00.000Z')) {}
  now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

export function testWorker(
  store: ConsoleStore,
  clock: TestClock,
  extra: Partial<DeliveryWorkerOptions> = {},
): DeliveryWorker {
  return new DeliveryWorker({
    db: store.db,
    dialect: store.dialect,
    instance: 'test-1',
    log: silentLogger(),
    clock: clock.now,
    mailer: null,
    post: { policy: { allowPrivate: false }, timeoutMs: 2000, ca: null },
    pollMs: 50,
    concurrency: 4,
    leaseMs: 60_000,
    publicUrl: 'https://console.example',
    ...extra,
  });
}

export function saleEvent(eventId: string, machineId = 'vm-1'): IncomingEvent {
  const event = {
    kind: 'sale',
    eventId,
    at: '2026-12-01T08:30:00.000Z',
    machineId,
    txId: `tx-${eventId}`,
    flow: 'static',
    amount: '1.50',
    currency: 'EUR',
    products: [{ item: 3, price: '1.50', outcome: 'success' }],
    closing: 'settlement',
    verdict: 'accepted',
  } as FleetEvent;
  return { machineId, event, receivedAt: new Date().toISOString(), raw: JSON.stringify(event) };
}
