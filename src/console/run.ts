/**
 * `qrvend console`: opens the database (migrating it), takes the fleet's messages from the
 * broker and serves the pages, until SIGTERM or SIGINT (docs/console.md).
 */
import { createLogger, type Logger } from '../core/log.js';
import { parseConnectionOptions } from '../fleet/operator/connection.js';
import { parseConsoleConfig, readConfigFile, type ConsoleSettings } from './config.js';
import { startIngest, type Ingest } from './ingest/ingest.js';
import { createReach, type Reach } from './reach.js';
import { openStore, storeLabel, type ConsoleStore } from './store/open.js';
import { startWeb, type ConsoleWeb } from './web/server.js';

export interface ConsoleFlags {
  config?: string;
  broker?: string;
  prefix?: string;
  db?: string;
  listen?: string;
  subscription?: string;
  group?: string;
  instance?: string;
}

/** The file's settings with the flags over them. */
export function consoleInput(flags: ConsoleFlags): Record<string, unknown> {
  const input: Record<string, unknown> = flags.config !== undefined ? readConfigFile(flags.config) : {};
  const broker = { ...((input.broker as Record<string, unknown> | undefined) ?? {}) };
  if (flags.broker !== undefined) broker.url = flags.broker;
  if (flags.prefix !== undefined) broker.prefix = flags.prefix;
  input.broker = broker;
  for (const key of ['db', 'listen', 'subscription', 'group', 'instance'] as const) {
    if (flags[key] !== undefined) input[key] = flags[key];
  }
  return input;
}

export function splitListen(listen: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(listen);
  return { host: (m?.[1] ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1'), port: Number(m?.[2] ?? 0) };
}

export interface RunningConsole {
  store: ConsoleStore;
  ingest: Ingest;
  web: ConsoleWeb;
  reach: Reach;
  close(): Promise<void>;
}

export async function startConsole(
  settings: ConsoleSettings & { transport: string },
  log: Logger,
): Promise<RunningConsole> {
  const store = await openStore(settings.db);
  let web: ConsoleWeb | null = null;
  let reach: Reach | null = null;
  try {
    reach = createReach(settings, store, log);
    const worker = reach.worker;
    web = await startWeb({
      db: store.db,
      log,
      listen: splitListen(settings.listen),
      tls:
        settings.certFile !== null && settings.keyFile !== null
          ? { certFile: settings.certFile, keyFile: settings.keyFile }
          : null,
      transport: settings.transport,
      behindTlsProxy: settings.behindTlsProxy,
      sessionHours: settings.sessionHours,
      timeZone: settings.timeZone,
      login: settings.login,
      pageSize: settings.pageSize,
      apiRequestsPerMinute: settings.api.requestsPerMinute,
      reach: {
        post: reach.post,
        emailConfigured: settings.email !== null,
        defaultZone: 'UTC',
        nudge: () => worker.nudge(),
      },
    });
    const live = web.live;
    const ingest = await startIngest(
      store.db,
      {
        connection: parseConnectionOptions(settings.broker),
        group: settings.group,
        subscription: settings.subscription,
        session: settings.instance,
        reconnectMs: settings.reconnectMs,
        batch: { events: settings.ingest.batchEvents, ms: settings.ingest.batchMs },
      },
      log,
      () => {
        live.changed();
        worker.nudge();
      },
    );
    reach.worker.start();
    reach.evaluator.start();
    const running = web;
    const reaching = reach;
    return {
      store,
      ingest,
      web: running,
      reach: reaching,
      close: async () => {
        await ingest.close();
        await reaching.close();
        await running.close();
        await store.close();
      },
    };
  } catch (err) {
    await reach?.close();
    await web?.close();
    await store.close();
    throw err;
  }
}

export async function runConsoleProcess(flags: ConsoleFlags): Promise<number> {
  const settings = parseConsoleConfig(consoleInput(flags));
  const log = createLogger({ name: 'console' });
  const running = await startConsole(settings, log);
  log.info(
    {
      url: running.web.url,
      db: storeLabel(settings.db),
      instance: settings.instance,
      subscription: settings.subscription,
    },
    'console ready',
  );
  process.stdout.write(`qrvend console: ${running.web.url} (database ${storeLabel(settings.db)})\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await running.close();
  return 0;
}
