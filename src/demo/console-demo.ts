/**
 * `qrvend demo --console` (docs/console.md "Trying it"): the operator console on its embedded
 * default, a SQLite file in a temporary directory, with a simulated fleet selling, and nothing
 * else to install. The machines' messages (retained status, sale events, an alarm raised and
 * cleared, a last will) are the fleet contract's, and go through the console's own checks and
 * store (ingest's handlePacket) as a broker's would; only the broker is left out: the product
 * ships no MQTT server, and the demo needs none to show the console. The machines run a planogram
 * (./demo-route.ts), filled to par at the start: their sales lower the stock and fill the pick list.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomInt } from 'node:crypto';
import { silentLogger } from '../core/log.js';
import { parseConsoleConfig } from '../console/config.js';
import { splitListen } from '../console/run.js';
import { handlePacket, type IngestCounters } from '../console/ingest/ingest.js';
import { openStore, type ConsoleStore } from '../console/store/open.js';
import { putUser } from '../console/store/accounts.js';
import { startWeb, type ConsoleWeb } from '../console/web/server.js';
import { DEMO_ROUTE, DEMO_SELECTIONS, seedDemoRoute } from './demo-route.js';

const PREFIX = 'qrvend';
const VERSION = '1.4.0';
const HISTORY_MS = 3 * 24 * 3600_000;

export interface ConsoleDemoOptions {
  listen: string;
  machines: number;
  /** How often one of the machines sells. */
  saleEveryMs: number;
}

export interface ConsoleDemo {
  url: string;
  /** The SQLite file, removed by stop(). */
  database: string;
  account: string;
  password: string;
  /** Sales fed so far. */
  sales(): number;
  stop(): Promise<void>;
}

function status(machineId: string, startedAt: string, alarms: string[]) {
  return {
    online: true,
    machineId,
    terminalId: `T-${machineId}`,
    uniQr: null,
    version: VERSION,
    startedAt,
    reader: 'enabled',
    readerDisabledRemotely: false,
    gateway: 'online',
    outbox: { pending: 0, dead: 0 },
    alarms,
    acceptsRelayedStart: false,
    at: new Date().toISOString(),
  };
}

function sale(machineId: string, n: number, atMs = Date.now()) {
  const pick = DEMO_SELECTIONS[randomInt(DEMO_SELECTIONS.length)]!;
  // The third machine's VMC asks 1.00 for the gum: the planogram's 0.90 differs.
  const amount = pick.item === 23 && machineId.endsWith('03') ? '1.00' : pick.price;
  return {
    kind: 'sale',
    eventId: `demo-${machineId}-${n}`,
    at: new Date(atMs).toISOString(),
    machineId,
    txId: `tx-${machineId}-${n}`,
    flow: n % 3 === 0 ? 'dynamic' : 'static',
    amount,
    currency: 'EUR',
    products: [{ item: pick.item, price: amount, outcome: 'success' }],
    closing: 'settlement',
    verdict: 'accepted',
  };
}

function alarm(machineId: string, n: number, state: 'raised' | 'cleared') {
  return {
    kind: 'alarm',
    eventId: `demo-${machineId}-${n}`,
    at: new Date().toISOString(),
    machineId,
    code: 'BOARD_SILENT',
    state,
    detail: state === 'raised' ? 'no line from the board for 15 s' : null,
  };
}

/**
 * Filled to par three days ago, sold since (some machines more than others): the stock pages show
 * levels and rates, and the route's pick list has work from the first minute.
 */
function pastSales(ids: string[], nowMs: number): Array<{ topic: string; body: unknown }> {
  return ids.flatMap((id, m) =>
    Array.from({ length: 6 + 4 * (m % 4) }, (_, k) => ({
      topic: `${PREFIX}/${id}/events`,
      body: sale(id, 10_000 + k, nowMs - HISTORY_MS + ((k + 1) * HISTORY_MS) / (8 + 4 * (m % 4))),
    })),
  );
}

/** The fleet's messages, one step at a time: a sale each tick, the alarm and the lost machine on cue. */
function fleetScript(ids: string[], startedAt: string) {
  let tick = 0;
  let sales = 0;
  const seq = new Map(ids.map((id) => [id, 0]));
  const next = (id: string) => {
    const n = (seq.get(id) ?? 0) + 1;
    seq.set(id, n);
    return n;
  };
  return {
    sales: () => sales,
    opening: () => ids.map((id) => ({ topic: `${PREFIX}/${id}/status`, body: status(id, startedAt, []) })),
    step: (): Array<{ topic: string; body: unknown }> => {
      tick++;
      const id = ids[randomInt(ids.length)]!;
      sales++;
      const out: Array<{ topic: string; body: unknown }> = [
        { topic: `${PREFIX}/${id}/events`, body: sale(id, next(id)) },
      ];
      const watched = ids[1 % ids.length]!;
      if (tick === 8 || tick === 30) {
        const state = tick === 8 ? 'raised' : 'cleared';
        out.push({ topic: `${PREFIX}/${watched}/events`, body: alarm(watched, next(watched), state) });
        const alarms = state === 'raised' ? ['BOARD_SILENT'] : [];
        out.push({ topic: `${PREFIX}/${watched}/status`, body: status(watched, startedAt, alarms) });
      }
      // A machine that loses its network: what the broker publishes for it is its last will.
      if (tick === 20) out.push({ topic: `${PREFIX}/${ids[2 % ids.length]!}/status`, body: { online: false } });
      return out;
    },
  };
}

export async function startConsoleDemo(options: ConsoleDemoOptions): Promise<ConsoleDemo> {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-console-demo-'));
  let store: ConsoleStore | null = null;
  let web: ConsoleWeb | null = null;
  try {
    // Only the web half of the settings is used; the broker named here is never dialled.
    const settings = parseConsoleConfig({
      broker: { url: 'mqtt://127.0.0.1:1883' },
      db: join(dir, 'console.sqlite'),
      listen: options.listen,
    });
    store = await openStore(settings.db);
    const db = store.db;
    web = await startWeb({
      db,
      log: silentLogger(),
      listen: splitListen(settings.listen),
      tls: null,
      transport: settings.transport,
      behindTlsProxy: false,
      sessionHours: settings.sessionHours,
      login: settings.login,
      pageSize: settings.pageSize,
    });
    const password = randomBytes(9).toString('base64url');
    await putUser(db, 'demo', 'admin', password);
    const live = web.live;
    const counters: IngestCounters = {
      stored: 0,
      duplicates: 0,
      statuses: 0,
      health: 0,
      refused: {},
      failedMessages: 0,
      batches: 0,
    };
    const h = { db, prefix: PREFIX, counters, onChange: () => live.changed() };
    const feed = async (messages: Array<{ topic: string; body: unknown }>) => {
      for (const m of messages) await handlePacket(h, m.topic, Buffer.from(JSON.stringify(m.body)));
    };
    const ids = Array.from({ length: options.machines }, (_, i) => `demo-${String(i + 1).padStart(2, '0')}`);
    const script = fleetScript(ids, new Date().toISOString());
    await feed(script.opening());
    await seedDemoRoute(db, ids, Date.now() - HISTORY_MS);
    await feed(pastSales(ids, Date.now()));
    let feeding: Promise<void> = Promise.resolve();
    const timer = setInterval(() => {
      feeding = feeding.then(() => feed(script.step())).catch(() => undefined);
    }, options.saleEveryMs);
    const running = { store, web };
    return {
      url: web.url,
      database: settings.db,
      account: 'demo',
      password,
      sales: script.sales,
      stop: async () => {
        clearInterval(timer);
        await feeding;
        await running.web.close();
        await running.store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await web?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** The command: prints the URL and the login, runs until Ctrl-C (or SIGTERM), cleans up. */
export async function runConsoleDemo(listen: string, out: (line: string) => void): Promise<number> {
  const demo = await startConsoleDemo({ listen, machines: 12, saleEveryMs: 1500 });
  out(`qrvend demo --console: ${demo.url}  (account ${demo.account}, password ${demo.password})`);
  out(`12 simulated machines are selling into ${demo.database}; Ctrl-C ends the demo and removes it.`);
  out(`Stock: ${demo.url}/stock  pick list: ${demo.url}/routes/${encodeURIComponent(DEMO_ROUTE)}/pick`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await demo.stop();
  out(`qrvend demo --console: stopped after ${demo.sales()} sales; its database is removed.`);
  return 0;
}
