/**
 * Outbox drain rate (docs/decisions/targets.md: 10,000 queued settlements against the local simulator,
 * >= 500 per second).
 *
 * 10,000 transactions are authorized at the gateway simulator (its own process, on loopback), their
 * sessions recorded and settled in a ledger file on disk, leaving 10,000 Settlement rows in the
 * outbox. Then the product's OutboxDrainer, with the product's gateway client and the default
 * `store` configuration (concurrency included), drains them; the clock runs from start() until the
 * last row is recorded delivered. The simulator's ledger is checked afterwards: every Settlement
 * accepted exactly once.
 */
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config/load.js';
import { openLedger, OutboxDrainer } from '../src/ledger/index.js';
import { measured, notMeasured, type Figure } from './figure.js';
import { Budget, waitFor } from './support/budget.js';
import { authorizeAll, benchBuilders, benchClient, GatewayProcess } from './support/gateway.js';
import { diskScratchDir } from './support/machine.js';
import { seedSettlements } from './support/seed-outbox.js';

const TARGET = { text: '>= 500 per second', checks: [{ stat: 'rate' as const, op: '>=' as const, limit: 500 }] };
const BASE = {
  id: 'outbox-drain',
  what: 'Outbox drain of 10,000 queued settlements (local simulator)',
  unit: 'settlements/s',
  target: TARGET,
};

export async function benchOutboxDrain(budget: Budget, items = 10_000): Promise<Figure[]> {
  const config = loadConfig({ env: {} }).config;
  const scratch = diskScratchDir('outbox');
  let gateway: GatewayProcess | null = null;
  const client = { current: null as ReturnType<typeof benchClient> | null };
  try {
    gateway = await GatewayProcess.start();
    client.current = benchClient(gateway.url);
    const builders = benchBuilders(config);
    const txIds = Array.from({ length: items }, (_, i) => `bench-drain-${String(i + 1).padStart(6, '0')}`);
    const seedStarted = performance.now();
    const authorized = await authorizeAll(client.current, builders, txIds, 10);
    const path = `${scratch.dir}/ledger.sqlite`;
    const queued = seedSettlements({
      path,
      decimalPlaces: config.machine.decimalPlaces,
      builders,
      authorized,
      authAmount: 10,
      price: 1.5,
    });
    const seedMs = performance.now() - seedStarted;

    const ledger = openLedger({ path, decimalPlaces: config.machine.decimalPlaces });
    let delivered = 0;
    let dead = 0;
    const drainer = new OutboxDrainer({
      ledger,
      sender: client.current,
      store: config.store,
      onDelivered: () => (delivered += 1),
      onDeadLetter: () => (dead += 1),
    });
    const t0 = performance.now();
    drainer.start();
    const finished = await waitFor(() => delivered + dead >= queued, budget.leftMs, 5);
    const elapsedS = (performance.now() - t0) / 1000;
    await drainer.stop();
    const pendingLeft = ledger.outbox.counts().pending;
    ledger.close();
    const summary = await gateway.summary();
    const context = {
      'store.concurrency': config.store.concurrency,
      queued,
      delivered,
      deadLettered: dead,
      pendingLeft,
      elapsedS: Math.round(elapsedS * 100) / 100,
      gatewaySettlementsAccepted: summary.byState.settled ?? 0,
      gatewayClosedMoreThanOnce: summary.closedMoreThanOnce.length,
      seedingS: Math.round(seedMs / 100) / 10,
    };
    if (!finished)
      return [
        notMeasured(
          { ...BASE, context },
          'error',
          `drain did not finish within its budget: ${delivered} of ${queued} delivered`,
        ),
      ];
    if (dead > 0)
      return [
        notMeasured(
          { ...BASE, context },
          'error',
          `${dead} settlements were dead-lettered; the drain is not a clean run`,
        ),
      ];
    return [measured({ ...BASE, context }, { samples: delivered, rate: delivered / elapsedS })];
  } catch (err) {
    return [notMeasured(BASE, 'error', (err as Error).message)];
  } finally {
    client.current?.close();
    await gateway?.stop();
    scratch.remove();
  }
}
