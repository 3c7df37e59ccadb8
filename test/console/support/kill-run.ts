/**
 * A fault run: machines publish a known number of sale events while `qrvend console` processes
 * ingest them; one console is killed with SIGKILL mid-ingest and started again. Every event must
 * end up stored exactly once (counted against what was sent, and in the daily totals).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt from 'mqtt';
import { sql, type Kysely } from 'kysely';
import { atProcessEnd } from '../../../src/sim/process-end.js';
import type { ConsoleDatabase } from '../../../src/console/store/schema.js';
import { waitFor } from './wait.js';

const MAIN_JS = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

export interface KillRunOptions {
  brokerUrl: string;
  protocol: '4' | '5';
  db: string;
  dir: string;
  subscription: 'shared' | 'plain';
  instances: number;
  machines: number;
  eventsPerMachine: number;
}

function startConsoleProcess(o: KillRunOptions, instance: string): ChildProcess {
  const config = join(o.dir, `${instance}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      broker: { url: o.brokerUrl, protocol: o.protocol },
      db: o.db,
      listen: '127.0.0.1:0',
      subscription: o.subscription,
      instance,
      reconnectMs: 200,
    }),
  );
  const child = spawn(process.execPath, [MAIN_JS, 'console', '-c', config], { stdio: ['ignore', 'ignore', 'inherit'] });
  const forget = atProcessEnd(() => child.kill('SIGKILL'));
  child.once('exit', forget);
  return child;
}

async function stored(db: Kysely<ConsoleDatabase>): Promise<number> {
  const row = await sql<{ n: number }>`select count(*) as n from events`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}

async function killed(child: ChildProcess): Promise<void> {
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await gone;
}

/** Returns what was sent and what the database holds after the run. */
export async function killMidIngest(o: KillRunOptions, db: Kysely<ConsoleDatabase>) {
  const publisher = await mqtt.connectAsync(o.brokerUrl, {
    protocolVersion: Number(o.protocol) as 4 | 5,
    clientId: 'kill-run-pub',
  });
  // A retained status the consoles store once subscribed (statuses and events are one SUBSCRIBE):
  // no event is sent before the consoles' sessions exist.
  await publisher.publishAsync('qrvend/vm-ready/status', '{"online":false}', { qos: 1, retain: true });
  const consoles = Array.from({ length: o.instances }, (_, i) => startConsoleProcess(o, `kill-run-${i}`));
  await waitFor(
    'the consoles subscribed',
    async () => {
      const row = await db
        .selectFrom('machines')
        .select('machine_id')
        .where('machine_id', '=', 'vm-ready')
        .executeTakeFirst();
      return row !== undefined;
    },
    60_000,
  );
  const total = o.machines * o.eventsPerMachine;
  const sending = (async () => {
    for (let n = 0; n < o.eventsPerMachine; n++) {
      await Promise.all(
        Array.from({ length: o.machines }, (_, m) => {
          const machineId = `vm-k${m}`;
          const event = {
            kind: 'sale',
            eventId: `k-${m}-${n}`,
            at: new Date().toISOString(),
            machineId,
            txId: `tx-${m}-${n}`,
            flow: 'static',
            amount: '1.00',
            currency: 'EUR',
            products: [],
            closing: 'settlement',
            verdict: 'accepted',
          };
          return publisher.publishAsync(`qrvend/${machineId}/events`, JSON.stringify(event), { qos: 1 });
        }),
      );
    }
  })();
  await waitFor('some events stored', async () => (await stored(db)) >= total / 5 || undefined, 120_000);
  await killed(consoles[0]!);
  const before = await stored(db);
  await sending;
  consoles[0] = startConsoleProcess(o, 'kill-run-0');
  await waitFor(`all ${total} events stored`, async () => (await stored(db)) >= total || undefined, 180_000);
  await new Promise((r) => setTimeout(r, 1000));
  for (const c of consoles) await killed(c);
  await publisher.endAsync();
  const totals = await sql<{ n: number }>`select coalesce(sum(paid_count), 0) as n from daily_totals`.execute(db);
  return { sent: total, storedAtKill: before, stored: await stored(db), counted: Number(totals.rows[0]?.n ?? 0) };
}
