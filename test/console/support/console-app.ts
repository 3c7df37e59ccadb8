/**
 * The whole console for a test, as `qrvend console` starts it (parseConsoleConfig, then
 * startConsole): its web server on a loopback port, its ingest on the in-process aedes broker, a
 * SQLite file (or the store given, test/console/store/databases.ts), and an admin account. `publish` sends
 * what a machine sends, through the broker; `storedEvents` says how many events ingest committed.
 */
import { PassThrough } from 'node:stream';
import mqtt, { type MqttClient } from 'mqtt';
import { startAedesBroker, type TestBroker } from '../../../rigs/broker/index.js';
import { createLogger, silentLogger, type Logger } from '../../../src/core/log.js';
import { parseConsoleConfig } from '../../../src/console/config.js';
import { startConsole, type RunningConsole } from '../../../src/console/run.js';
import { putUser } from '../../../src/console/store/accounts.js';
import { openTestStore, type TestStore } from './store.js';
import { waitFor } from './wait.js';

export const ADMIN = { name: 'admin1', password: 'admin-password-1' };

export interface ConsoleApp {
  url: string;
  store: TestStore;
  running: RunningConsole;
  /** Publishes one machine message (QoS 1) on `qrvend/<machineId>/<kind>`. */
  publish(machineId: string, kind: 'status' | 'events' | 'health', body: unknown, retain?: boolean): Promise<void>;
  /** Waits until ingest has stored `n` events in all. */
  waitStored(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function startConsoleApp(
  settings: Record<string, unknown> = {},
  options: { store?: TestStore; log?: Logger } = {},
): Promise<ConsoleApp> {
  const broker: TestBroker = await startAedesBroker();
  const store = options.store ?? (await openTestStore('sqlite'));
  let device: MqttClient | null = null;
  let running: RunningConsole | null = null;
  const close = async () => {
    await device?.endAsync();
    await running?.close();
    await store.remove();
    await broker.close();
  };
  try {
    await putUser(store.db, ADMIN.name, 'admin', ADMIN.password);
    const config = parseConsoleConfig({
      broker: { url: broker.url, protocol: '4' },
      db: store.target,
      listen: '127.0.0.1:0',
      subscription: 'plain',
      instance: 'console-app-test',
      ...settings,
    });
    running = await startConsole(config, options.log ?? silentLogger());
    device = await mqtt.connectAsync(broker.url, { protocolVersion: 4, clientId: 'console-app-device' });
    const app = running;
    const client = device;
    return {
      url: app.web.url,
      store,
      running: app,
      publish: async (machineId, kind, body, retain = false) => {
        await client.publishAsync(`qrvend/${machineId}/${kind}`, JSON.stringify(body), { qos: 1, retain });
      },
      waitStored: async (n) => {
        await waitFor(`${n} events stored`, () => app.ingest.counters.stored >= n);
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A logger whose lines a test reads (NDJSON, one object per line). */
export function recordingLogger(level: 'info' | 'warn' = 'info'): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new PassThrough();
  destination.on('data', (chunk: Buffer) =>
    lines.push(
      ...chunk
        .toString()
        .split('\n')
        .filter((l) => l !== ''),
    ),
  );
  return { log: createLogger({ level, destination }), lines };
}
