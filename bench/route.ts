/**
 * The route's figures (docs/console.md, "Measured"), for `npm run bench`: on SQLite and, where
 * Debian's postgresql is installed, on a PostgreSQL server of the bench's own, each seeded with
 * 10,000 machines x 40 selections (bench/route-seed.ts): the pick list of a route of 200 machines
 * and the fleet's "needs a visit" list (the routes page), p95 of full HTTP requests (query and
 * rendering); and what keeping stock costs ingest: its rate through a real broker with sales that
 * each lower a selection's stock, against the same sales without a vend, on the seeded machines.
 * Durations on the monotonic clock.
 */
import { silentLogger } from '../src/core/log.js';
import { putUser } from '../src/console/store/accounts.js';
import mqtt from 'mqtt';
import { startAedesBroker } from '../rigs/broker/index.js';
import { startIngest } from '../src/console/ingest/ingest.js';
import { parseConnectionOptions } from '../src/fleet/operator/connection.js';
import { startWeb } from '../src/console/web/server.js';
import { postgresBinDir, startPostgres } from '../test/console/support/postgres.js';
import { openTestStore, type TestStore } from '../test/console/support/store.js';
import { WebClient } from '../test/console/support/web-client.js';
import { measured, notMeasured, type Figure, type Target } from './figure.js';
import { ROUTE_SEED, seedRoute } from './route-seed.js';
import { percentile, summarize } from './stats.js';
import { waitFor, type Budget } from './support/budget.js';

const atMost = (limit: number, text: string): Target => ({ text, checks: [{ stat: 'value', op: '<=', limit }] });

const PICK = (db: string) => ({
  id: `route-pick-p95-${db}`,
  what: `Pick list of a 200-machine route, 10,000 machines x 40 selections (${db})`,
  unit: 'ms (p95)',
  target: atMost(300, 'p95 <= 300 ms'),
});
const NEEDS = (db: string) => ({
  id: `route-needs-visit-p95-${db}`,
  what: `"Needs a visit", 10,000 machines x 40 selections (${db})`,
  unit: 'ms (p95)',
  target: atMost(300, 'p95 <= 300 ms'),
});
const COST = {
  id: 'route-stock-ingest-cost',
  what: 'What keeping stock costs ingest (SQLite, through the broker, 10,000 machines x 40 selections)',
  unit: '% of the rate',
  target: atMost(10, '<= 10 % of the rate'),
};

export const ROUTE_FIGURES = [
  PICK('sqlite').id,
  NEEDS('sqlite').id,
  PICK('postgres').id,
  NEEDS('postgres').id,
  COST.id,
];

/** p95 of full HTTP requests (wall clock), and the p95 of this process's CPU per request. */
async function p95(client: WebClient, requests: number, path: (i: number) => string, budget: Budget) {
  const samples: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < requests && (i < 10 || !budget.spent); i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    const res = await client.request(path(i));
    if (res.status !== 200) throw new Error(`${res.status} from the console for ${path(i)}`);
    samples.push(performance.now() - t);
    const used = process.cpuUsage(c);
    cpu.push((used.user + used.system) / 1000);
  }
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const value = percentile(sorted(samples), 0.95);
  return { samples: samples.length, summary: summarize(samples), value, cpuP95: percentile(sorted(cpu), 0.95) };
}

async function pageFigures(store: TestStore, db: string, requests: number, budget: Budget): Promise<Figure[]> {
  const nowMs = Date.now();
  await seedRoute(store.db, store.dialect, nowMs);
  await putUser(store.db, 'bench', 'viewer', 'bench-password-1');
  const web = await startWeb({
    db: store.db,
    log: silentLogger(),
    listen: { host: '127.0.0.1', port: 0 },
    tls: null,
    transport: 'loopback',
    behindTlsProxy: false,
    sessionHours: 1,
    login: { failures: 10, windowS: 900 },
    pageSize: 100,
  });
  try {
    const client = new WebClient(web.url);
    await client.login('bench', 'bench-password-1');
    const day = new Date(nowMs).toISOString().slice(0, 10);
    const context = { requests, machines: ROUTE_SEED.machines, selections: ROUTE_SEED.selections };
    const pick = await p95(client, requests, (i) => `/routes/R${(i * 7) % ROUTE_SEED.routes}/pick?day=${day}`, budget);
    const needs = await p95(client, requests, (i) => `/routes?day=${day}&page=${1 + (i % 5)}`, budget);
    const rows = await client.request(`/routes?day=${day}`);
    const total = /Machines that need a visit on [^(]*\((\d+)\)/.exec(rows.text)?.[1] ?? '?';
    const cpu = (x: { cpuP95: number }) =>
      `CPU p95 ${x.cpuP95.toFixed(0)} ms a request in the console's process` +
      (db === 'postgres' ? " (the server's own not counted)" : '');
    return [
      measured({ ...PICK(db), context, detail: `${ROUTE_SEED.perRoute} machines a route; ${cpu(pick)}` }, pick),
      measured(
        { ...NEEDS(db), context, detail: `${total} of ${ROUTE_SEED.machines} machines need a visit; ${cpu(needs)}` },
        needs,
      ),
    ];
  } finally {
    await web.close();
  }
}

/**
 * One round of ingest through a real broker (aedes, in this process with the publisher): `count`
 * sales spread over the seeded machines, each with one vend (stock lowered) or none (nothing for
 * stock to do; otherwise the same events); events per second, and per CPU-second of the process.
 */
async function ingestRate(store: TestStore, count: number, vend: boolean, round: string) {
  const broker = await startAedesBroker();
  const connection = parseConnectionOptions({ url: broker.url, protocol: '4' });
  const options = { connection, group: 'g', subscription: 'plain' as const, session: `r-${round}`, reconnectMs: 200 };
  const ingest = await startIngest(store.db, options, silentLogger());
  const pub = await mqtt.connectAsync(broker.url, { protocolVersion: 4 });
  try {
    const at = new Date().toISOString();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < count; i += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, count - i) }, (_, j) => {
          const n = i + j;
          const machineId = `vm-${(n * 13) % ROUTE_SEED.machines}`;
          const products = vend ? [{ item: n % ROUTE_SEED.selections, price: '1.50', outcome: 'success' }] : [];
          const e = { kind: 'sale', eventId: `${round}-${n}`, at, machineId, txId: `${round}-t${n}`, flow: 'static' };
          Object.assign(e, { amount: '1.50', currency: 'EUR', products, closing: 'settlement', verdict: 'accepted' });
          return pub.publishAsync(`qrvend/${machineId}/events`, JSON.stringify(e), { qos: 1 });
        }),
      );
    }
    await waitFor(() => ingest.counters.stored >= count, 120_000);
    const s = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return { rate: ingest.counters.stored / s, perCpu: ingest.counters.stored / ((cpu.user + cpu.system) / 1e6) };
  } finally {
    await pub.endAsync();
    await ingest.close();
    await broker.close();
  }
}

/** Alternating rounds with and without a vend in each sale (the seeded SQLite store), compared in sum. */
async function costFigure(store: TestStore, rounds: number, count: number): Promise<Figure> {
  const withStock: number[] = [];
  const without: number[] = [];
  const cpuWith: number[] = [];
  const cpuWithout: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const a = await ingestRate(store, count, false, `n${r}`);
    const b = await ingestRate(store, count, true, `s${r}`);
    without.push(a.rate);
    cpuWithout.push(a.perCpu);
    withStock.push(b.rate);
    cpuWith.push(b.perCpu);
  }
  const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
  const cost = (1 - sum(withStock) / sum(without)) * 100;
  const cpuCost = (1 - sum(cpuWith) / sum(cpuWithout)) * 100;
  const detail =
    `${Math.round(sum(withStock) / rounds)} events/s with a vend each, ${Math.round(sum(without) / rounds)} ` +
    `without; per CPU-second ${Math.round(sum(cpuWith) / rounds)} and ${Math.round(sum(cpuWithout) / rounds)} ` +
    `(${cpuCost.toFixed(1)} %); ${rounds} rounds of ${count} sales each way through the broker`;
  return measured({ ...COST, detail, context: { rounds, count } }, { samples: rounds * 2, value: Math.max(0, cost) });
}

async function onPostgres(budget: Budget, requests: number): Promise<Figure[]> {
  if (postgresBinDir() === null)
    return [PICK('postgres'), NEEDS('postgres')].map((f) =>
      notMeasured(f, 'pending', 'PostgreSQL not installed (apt-get install postgresql)'),
    );
  const pg = await startPostgres();
  const before = process.env.QRVEND_CONSOLE_TEST_PG;
  process.env.QRVEND_CONSOLE_TEST_PG = pg.server;
  try {
    const store = await openTestStore('env');
    try {
      return await pageFigures(store, 'postgres', requests, budget);
    } finally {
      await store.remove();
    }
  } finally {
    if (before === undefined) delete process.env.QRVEND_CONSOLE_TEST_PG;
    else process.env.QRVEND_CONSOLE_TEST_PG = before;
    pg.stop();
  }
}

export async function benchRoute(budget: Budget, requests = 60): Promise<Figure[]> {
  const store = await openTestStore('sqlite');
  let sqlite: Figure[];
  try {
    sqlite = await pageFigures(store, 'sqlite', requests, budget.slice(budget.leftMs / 3));
    sqlite.push(await costFigure(store, 4, 4000));
  } finally {
    await store.remove();
  }
  const postgres = await onPostgres(budget, requests).catch((err: unknown) =>
    [PICK('postgres'), NEEDS('postgres')].map((f) => notMeasured(f, 'error', `PostgreSQL: ${(err as Error).message}`)),
  );
  return [sqlite[0]!, sqlite[1]!, ...postgres, sqlite[2]!];
}
