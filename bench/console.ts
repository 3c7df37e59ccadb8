/**
 * The operator console's figures (docs/console.md, "Measured"), for `npm run bench` and
 * `npm run console-bench`: sustained ingest (sale events committed per second through a real
 * broker, each PUBACK after its batch's commit) on SQLite and, where Debian's postgresql is
 * installed, on a PostgreSQL server of the bench's own; the fleet overview with 10,000 machines
 * and the sales page over 1,095,000 sales (p95 of full HTTP requests: query and rendering); the
 * resident memory across the ingest rounds. The broker, the publishing machines and the console
 * share this one process: the ingest rate is what one core does for all three.
 * Durations on the monotonic clock (performance.now).
 */
import mqtt from 'mqtt';
import { startAedesBroker } from '../rigs/broker/index.js';
import { silentLogger } from '../src/core/log.js';
import { startIngest } from '../src/console/ingest/ingest.js';
import { putUser } from '../src/console/store/accounts.js';
import { startWeb } from '../src/console/web/server.js';
import { parseConnectionOptions } from '../src/fleet/operator/connection.js';
import { postgresBinDir, startPostgres } from '../test/console/support/postgres.js';
import { openTestStore, type TestStore } from '../test/console/support/store.js';
import { WebClient } from '../test/console/support/web-client.js';
import { FIRST_DAY, SEED, SEED_SALES, seedConsole } from './console-seed.js';
import { API_SALES, FEED_LAG, apiSalesFigure, feedLagFigure } from './console-reach.js';
import { measured, notMeasured, type Figure, type Target } from './figure.js';
import { summarize, percentile } from './stats.js';
import { Budget, waitFor } from './support/budget.js';

const atLeast = (limit: number, text: string): Target => ({ text, checks: [{ stat: 'rate', op: '>=', limit }] });
const atMost = (limit: number, text: string): Target => ({ text, checks: [{ stat: 'value', op: '<=', limit }] });

const INGEST = (db: string) => ({
  id: `console-ingest-${db}`,
  what: `Console ingest, sale events committed per second (${db})`,
  unit: 'events/s',
  target: atLeast(2000, '>= 2,000/s, none lost'),
});
const OVERVIEW = {
  id: 'console-overview-p95',
  what: 'Fleet overview, 10,000 machines',
  unit: 'ms (p95)',
  target: atMost(200, 'p95 <= 200 ms'),
};
const SALES = {
  id: 'console-sales-p95',
  what: `Sales page over ${SEED_SALES} sales`,
  unit: 'ms (p95)',
  target: atMost(200, 'p95 <= 200 ms'),
};
const RSS = {
  id: 'console-rss-growth',
  what: 'Resident memory growth across ingest rounds and page loads',
  unit: 'MB',
  target: atMost(32, '<= 32 MB from after the page figures to the last round'),
};

export const CONSOLE_FIGURES = [
  INGEST('sqlite').id,
  INGEST('postgres').id,
  OVERVIEW.id,
  SALES.id,
  API_SALES.id,
  FEED_LAG.id,
  RSS.id,
];

interface IngestRound {
  rate: number;
  stored: number;
  cpuS: number;
  batches: number;
}

/** One round: `count` sale events from 100 machines, published 100 at a time at QoS 1. */
async function ingestRound(store: TestStore, count: number, round: number, budget: Budget): Promise<IngestRound> {
  const broker = await startAedesBroker();
  const connection = parseConnectionOptions({ url: broker.url, protocol: '4' });
  const ingest = await startIngest(
    store.db,
    { connection, group: 'g', subscription: 'plain', session: `bench-${round}`, reconnectMs: 200 },
    silentLogger(),
  );
  const pub = await mqtt.connectAsync(broker.url, { protocolVersion: 4 });
  try {
    const at = new Date().toISOString();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < count; i += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, count - i) }, (_, j) => {
          const m = `vm-b${(i + j) % 100}`;
          const n = `${round}-${i + j}`;
          const e = { kind: 'sale', eventId: `b-${n}`, at, machineId: m, txId: `t-${n}`, flow: 'static' };
          Object.assign(e, { amount: '1.20', currency: 'EUR', products: [] });
          Object.assign(e, { closing: 'settlement', verdict: 'accepted' });
          return pub.publishAsync(`qrvend/${m}/events`, JSON.stringify(e), { qos: 1 });
        }),
      );
    }
    await waitFor(() => ingest.counters.stored >= count, Math.max(1000, budget.leftMs));
    const s = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const c = ingest.counters;
    return { rate: c.stored / s, stored: c.stored, cpuS: (cpu.user + cpu.system) / 1e6, batches: c.batches };
  } finally {
    await pub.endAsync();
    await ingest.close();
    await broker.close();
  }
}

async function ingestFigure(store: TestStore, db: string, count: number, budget: Budget): Promise<Figure> {
  const r = await ingestRound(store, count, 0, budget);
  const base = {
    ...INGEST(db),
    context: { events: count, stored: r.stored, batches: r.batches, cpuSeconds: Math.round(r.cpuS * 100) / 100 },
    detail:
      `${r.stored} of ${count} stored in ${r.batches} transactions; ` +
      `${Math.round(r.stored / r.cpuS)} events per CPU-second (broker and publisher included)`,
  };
  if (r.stored < count) return notMeasured(base, 'error', `${count - r.stored} events not stored within the budget`);
  return measured(base, { samples: r.stored, rate: r.rate });
}

/** p95 of full HTTP requests, each from `next()`. */
async function pageP95(client: WebClient, requests: number, next: (i: number) => string) {
  const samples: number[] = [];
  for (let i = 0; i < requests; i++) {
    const t = performance.now();
    const res = await client.request(next(i));
    if (res.status !== 200) throw new Error(`${res.status} from the console for ${next(i)}`);
    samples.push(performance.now() - t);
  }
  const p95 = percentile(
    [...samples].sort((a, b) => a - b),
    0.95,
  );
  return { samples: samples.length, summary: summarize(samples), value: p95 };
}

/** What an operator asks of the sales page: the default fortnight, a quarter paged through, one machine's year. */
export function salesPath(i: number): string {
  const q = (days: number) => new Date(Date.parse(SEED.lastDay) - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  if (i % 3 === 0) return `/sales?to=${SEED.lastDay}&page=${1 + (i % 10)}`;
  if (i % 3 === 1) return `/sales?from=${q(91)}&to=${SEED.lastDay}&page=${1 + ((i * 37) % 910)}`;
  return `/sales?from=${FIRST_DAY}&to=${SEED.lastDay}&machine=vm-${(i * 7) % SEED.sellingMachines}`;
}

async function pageFigures(store: TestStore, requests: number): Promise<Figure[]> {
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
    const filters = ['all', 'offline', 'alarms', 'out-of-order'];
    const overview = await pageP95(client, requests, (i) => `/?filter=${filters[i % 4]}&page=${1 + ((i * 7) % 100)}`);
    const sales = await pageP95(client, requests, salesPath);
    const dailyTotals = SEED.sellingMachines * SEED.days;
    const context = { requests, machines: SEED.machines, sales: SEED_SALES, dailyTotals };
    const api = await apiSalesFigure(store, web.url, requests);
    return [measured({ ...OVERVIEW, context }, overview), measured({ ...SALES, context }, sales), api];
  } finally {
    await web.close();
  }
}

export interface ConsoleBenchOptions {
  ingestEvents: number;
  pageRequests: number;
  /** Memory rounds after the page figures (each `ingestEvents` / 2 events and a tenth of the page requests). */
  rssRounds: number;
}

export const CONSOLE_BENCH_DEFAULTS: ConsoleBenchOptions = { ingestEvents: 10_000, pageRequests: 100, rssRounds: 4 };

async function sqliteFigures(budget: Budget, o: ConsoleBenchOptions): Promise<Figure[]> {
  const store = await openTestStore('sqlite');
  try {
    const ingest = await ingestFigure(store, 'sqlite', o.ingestEvents, budget.slice(budget.leftMs / 3));
    const feed = await feedLagFigure().catch((err: unknown) => notMeasured(FEED_LAG, 'error', (err as Error).message));
    await seedConsole(store.db, 'sqlite');
    const pages = await pageFigures(store, o.pageRequests);
    const rss: number[] = [process.memoryUsage().rss / 1048576];
    // The first round whatever the budget: without it there is no growth to report.
    for (let round = 1; round <= o.rssRounds && (round === 1 || !budget.spent); round++) {
      await ingestRound(store, Math.floor(o.ingestEvents / 2), round, budget);
      await pageFigures(store, Math.max(4, Math.floor(o.pageRequests / 10)));
      rss.push(process.memoryUsage().rss / 1048576);
    }
    const growth = rss.length >= 2 ? rss[rss.length - 1]! - rss[0]! : NaN;
    const rssFigure = Number.isFinite(growth)
      ? measured(
          {
            ...RSS,
            detail: `RSS after each round: ${rss.map((r) => r.toFixed(0)).join(', ')} MB`,
            context: { rounds: rss.length },
          },
          { samples: rss.length, value: growth },
        )
      : notMeasured(RSS, 'error', 'no memory round');
    return [ingest, ...pages, feed, rssFigure];
  } finally {
    await store.remove();
  }
}

async function postgresFigure(budget: Budget, o: ConsoleBenchOptions): Promise<Figure> {
  if (postgresBinDir() === null) {
    return notMeasured(INGEST('postgres'), 'pending', 'PostgreSQL not installed (apt-get install postgresql)');
  }
  const pg = await startPostgres();
  const before = process.env.QRVEND_CONSOLE_TEST_PG;
  process.env.QRVEND_CONSOLE_TEST_PG = pg.server;
  try {
    const store = await openTestStore('env');
    try {
      return await ingestFigure(store, 'postgres', o.ingestEvents, budget);
    } finally {
      await store.remove();
    }
  } finally {
    if (before === undefined) delete process.env.QRVEND_CONSOLE_TEST_PG;
    else process.env.QRVEND_CONSOLE_TEST_PG = before;
    pg.stop();
  }
}

export async function benchConsole(budget: Budget, o: ConsoleBenchOptions = CONSOLE_BENCH_DEFAULTS): Promise<Figure[]> {
  const sqlite = await sqliteFigures(budget.slice(budget.leftMs * 0.75), o);
  const postgres = await postgresFigure(budget, o).catch((err: unknown) =>
    notMeasured(INGEST('postgres'), 'error', `PostgreSQL: ${(err as Error).message}`),
  );
  return [sqlite[0]!, postgres, ...sqlite.slice(1)];
}
