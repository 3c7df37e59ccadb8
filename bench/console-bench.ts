/**
 * `npm run console-bench`: the operator console's figures on this machine (docs/console.md):
 * sustained ingest (sale events per second committed, through a real broker with the PUBACK
 * after each commit), the fleet overview with 10,000 machines and the sales page over 1,000,000
 * sales (p95 of full HTTP requests: query + rendering), and the console's memory after it.
 * SQLite by default; PostgreSQL too when QRVEND_CONSOLE_TEST_PG names a server.
 * Durations on the monotonic clock (performance.now).
 */
import { sql } from 'kysely';
import mqtt from 'mqtt';
import { silentLogger } from '../src/core/log.js';
import { startAedesBroker } from '../rigs/broker/index.js';
import { parseConnectionOptions } from '../src/fleet/operator/connection.js';
import { startIngest } from '../src/console/ingest/ingest.js';
import { putUser } from '../src/console/store/accounts.js';
import { startWeb } from '../src/console/web/server.js';
import { openTestStore, type TestStore } from '../test/console/support/store.js';
import { WebClient } from '../test/console/support/web-client.js';
import { waitFor } from '../test/console/support/wait.js';

const INGEST_EVENTS = 10_000;
const MACHINES = 10_000;
const SALES = 1_000_000;
const REQUESTS = 100;

function p95(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)] ?? NaN;
}

async function ingestRate(store: TestStore): Promise<number> {
  const broker = await startAedesBroker();
  const connection = parseConnectionOptions({ url: broker.url, protocol: '4' });
  const ingest = await startIngest(
    store.db,
    { connection, group: 'g', subscription: 'plain', session: 'bench', reconnectMs: 200 },
    silentLogger(),
  );
  const pub = await mqtt.connectAsync(broker.url, { protocolVersion: 4 });
  const started = performance.now();
  const at = new Date().toISOString();
  for (let i = 0; i < INGEST_EVENTS; i += 100) {
    await Promise.all(
      Array.from({ length: 100 }, (_, j) => {
        const m = `vm-b${(i + j) % 100}`;
        const e = {
          kind: 'sale',
          eventId: `b-${i + j}`,
          at,
          machineId: m,
          txId: `t-${i + j}`,
          flow: 'static',
          amount: '1.20',
          currency: 'EUR',
          products: [],
          closing: 'settlement',
          verdict: 'accepted',
        };
        return pub.publishAsync(`qrvend/${m}/events`, JSON.stringify(e), { qos: 1 });
      }),
    );
  }
  await waitFor('every event committed', () => ingest.counters.stored >= INGEST_EVENTS || undefined, 600_000);
  const rate = INGEST_EVENTS / ((performance.now() - started) / 1000);
  await pub.endAsync();
  await ingest.close();
  await broker.close();
  return rate;
}

/** 10,000 machines and 1,000,000 sales over 100 days, with their daily totals, written in bulk. */
async function seed(store: TestStore): Promise<void> {
  const series =
    store.dialect === 'sqlite'
      ? (n: number) =>
          sql`with recursive s(i) as (select 0 union all select i + 1 from s where i + 1 < ${n}) select i from s`
      : (n: number) => sql`select generate_series(0, ${n} - 1) as i`;
  const machines = series(MACHINES);
  await sql`insert into machines (machine_id, online, terminal_id, version, reader, disabled_remotely, gateway,
    outbox_pending, outbox_dead, alarms, seen_at)
    select 'vm-' || i, case when i % 10 = 0 then 0 else 1 end, 'T' || i, '1.4.0', 'enabled', 0, 'online', 0, 0,
    case when i % 50 = 0 then 'BOARD_SILENT' else '' end, '2026-11-28T00:00:00Z'
    from (${machines}) s`.execute(store.db);
  const day =
    store.dialect === 'sqlite'
      ? sql`date('2026-08-20', '+' || (i % 100) || ' days')`
      : sql`to_char(date '2026-08-20' + (i % 100), 'YYYY-MM-DD')`;
  await sql`insert into sales (machine_id, event_id, kind, day, at, tx_id, flow, amount, amount_milli, currency,
    closing, verdict, item)
    select 'vm-' || (i % ${MACHINES}), 's-' || i, 'qr', ${day}, ${day} || 'T12:00:00Z', 't-' || i, 'static', '1.50',
    1500, 'EUR', 'settlement', 'accepted', 1 from (${series(SALES)}) s`.execute(store.db);
  await sql`insert into daily_totals (day, machine_id, currency, paid_count, paid_milli, cash_count, cash_milli,
    cancelled_count, dead_count, dead_milli)
    select day, machine_id, currency, count(*), sum(amount_milli), 0, 0, 0, 0, 0 from sales
    where event_id like 's-%' group by day, machine_id, currency`.execute(store.db);
}

async function pageP95(client: WebClient, paths: () => string): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t = performance.now();
    const res = await client.request(paths());
    if (res.status !== 200) throw new Error(`${res.status} from the console`);
    samples.push(performance.now() - t);
  }
  return p95(samples);
}

async function run(label: string, kind: 'sqlite' | 'env'): Promise<void> {
  const store = await openTestStore(kind);
  try {
    const rate = await ingestRate(store);
    const seedStart = performance.now();
    await seed(store);
    const seedS = (performance.now() - seedStart) / 1000;
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
    const client = new WebClient(web.url);
    await client.login('bench', 'bench-password-1');
    const filters = ['all', 'offline', 'alarms', 'out-of-order'];
    let n = 0;
    const overview = await pageP95(client, () => `/?filter=${filters[n % 4]}&page=${1 + ((n++ * 7) % 100)}`);
    const sales = await pageP95(client, () => `/sales?from=2026-08-20&to=2026-11-27&page=${1 + ((n++ * 13) % 1000)}`);
    await web.close();
    const rss = Math.round(process.memoryUsage().rss / 1048576);
    process.stdout.write(
      `${label}: ingest ${rate.toFixed(0)} events/s committed (${INGEST_EVENTS} events, no loss); seeded ` +
        `${MACHINES} machines and ${SALES} sales in ${seedS.toFixed(1)} s; overview p95 ${overview.toFixed(1)} ms; ` +
        `sales p95 ${sales.toFixed(1)} ms (${REQUESTS} requests each); RSS ${rss} MB\n`,
    );
  } finally {
    await store.remove();
  }
}

await run('SQLite', 'sqlite');
if ((process.env.QRVEND_CONSOLE_TEST_PG ?? '') !== '') await run('PostgreSQL', 'env');
