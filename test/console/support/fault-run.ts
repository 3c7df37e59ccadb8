/**
 * The parts of the console's fault runs (test/console/browser/faults.ts): `qrvend console` as an
 * operator runs it (its own process, its log kept for the test to read), machines that sell the
 * way an agent's fleet worker publishes (src/fleet/machine-link/link.ts: QoS 1 events held until the
 * broker's PUBACK, sent again after a reconnect, a bounded window in flight), and the count of
 * what the console stored against what the machines sent, by eventId.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt, { type MqttClient } from 'mqtt';
import { sql, type Kysely } from 'kysely';
import { atProcessEnd } from '../../../src/sim/process-end.js';
import type { ConsoleDatabase } from '../../../src/console/store/schema.js';
import { waitFor } from './wait.js';

const MAIN_JS = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

export interface ConsoleProcess {
  child: ChildProcess;
  /** The console's log lines (NDJSON on stdout), the last 2,000. */
  log: string[];
  stop(): Promise<void>;
}

/** `qrvend console -c <file>` with the given settings over the broker and database. */
export function startConsoleProcess(dir: string, settings: Record<string, unknown>): ConsoleProcess {
  const config = join(dir, `${String(settings.instance)}.json`);
  writeFileSync(config, JSON.stringify({ listen: '127.0.0.1:0', ...settings }));
  const child = spawn(process.execPath, [MAIN_JS, 'console', '-c', config], { stdio: ['ignore', 'pipe', 'inherit'] });
  const forget = atProcessEnd(() => child.kill('SIGKILL'));
  const log: string[] = [];
  let rest = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    log.push(...lines);
    if (log.length > 2000) log.splice(0, log.length - 2000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(forget);
  return {
    child,
    log,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Waits for the console's subscriptions: a retained status it stores once subscribed (statuses
 * and events are one SUBSCRIBE), so no sale is sent before its session exists.
 */
export async function waitSubscribed(brokerUrl: string, db: Kysely<ConsoleDatabase>): Promise<void> {
  const client = await mqtt.connectAsync(brokerUrl, { clientId: 'fault-run-ready', reconnectPeriod: 0 });
  await client.publishAsync('qrvend/vm-ready/status', '{"online":false}', { qos: 1, retain: true });
  await client.endAsync();
  await waitFor(
    'the console subscribed',
    async () =>
      (await db.selectFrom('machines').select('machine_id').where('machine_id', '=', 'vm-ready').executeTakeFirst()) !==
      undefined,
    60_000,
  );
}

/** Events in flight per machine at once, as the agent's fleet worker (EVENT_WINDOW there is 32). */
const WINDOW = 8;

/** A machine that sells `count` sales, each a QoS 1 event kept until the broker acknowledged it. */
export class SellingMachine {
  readonly sent = new Set<string>();
  acked = 0;
  private constructor(
    readonly machineId: string,
    private readonly client: MqttClient,
  ) {}

  static async connect(brokerUrl: string, machineId: string): Promise<SellingMachine> {
    const client = await mqtt.connectAsync(brokerUrl, {
      clientId: `qrvend-${machineId}`,
      // As the agent (src/fleet/machine-link/client-options.ts): a clean session, its own reconnect.
      clean: true,
      reconnectPeriod: 300,
      connectTimeout: 5_000,
      queueQoSZero: false,
    });
    client.on('error', () => undefined);
    return new SellingMachine(machineId, client);
  }

  /**
   * Sells `count` sales, one every `paceMs` (a machine sells at its customers' pace, not the
   * broker's), at most WINDOW unacknowledged at once; resolves when all are acknowledged.
   */
  async sell(count: number, prefix: string, paceMs: number): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    for (let n = 0; n < count; n++) {
      while (inFlight.size >= WINDOW) await Promise.race(inFlight);
      const eventId = `${prefix}-${this.machineId}-${n}`;
      this.sent.add(eventId);
      const done: Promise<void> = this.publishUntilAcked(eventId, n).then(() => {
        this.acked++;
        inFlight.delete(done);
      });
      inFlight.add(done);
      await new Promise((r) => setTimeout(r, paceMs));
    }
    await Promise.all(inFlight);
  }

  private async publishUntilAcked(eventId: string, n: number): Promise<void> {
    const body = JSON.stringify({
      kind: 'sale',
      eventId,
      at: new Date().toISOString(),
      machineId: this.machineId,
      txId: `tx-${eventId}`,
      flow: 'static',
      amount: '1.50',
      currency: 'EUR',
      products: [{ item: 1 + (n % 40), price: '1.50', outcome: 'vended' }],
      closing: 'settlement',
      verdict: 'accepted',
    });
    for (;;) {
      const err = await new Promise<Error | undefined>((resolve) =>
        this.client.publish(`qrvend/${this.machineId}/events`, body, { qos: 1 }, (e) => resolve(e ?? undefined)),
      );
      if (err === undefined) return;
      // Given up by the client (the agent's worker pulls it again from its outbox): the same eventId.
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  close(): Promise<void> {
    return this.client.endAsync(true);
  }
}

export async function storedCount(db: Kysely<ConsoleDatabase>): Promise<number> {
  const row = await sql<{ n: number }>`select count(*) as n from events where machine_id <> 'vm-ready'`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}

export interface Tally {
  sent: number;
  stored: number;
  /** Sent and not stored. */
  missing: string[];
  /** Stored and never sent. */
  unknown: string[];
  /** eventIds stored more than once (by the events table or the sales table). */
  twice: string[];
  /** The sales counted in the daily totals. */
  counted: number;
}

/** What the console holds against what the machines sent, by eventId. */
export async function tally(db: Kysely<ConsoleDatabase>, machines: readonly SellingMachine[]): Promise<Tally> {
  const sent = new Set(machines.flatMap((m) => [...m.sent]));
  const ids = machines.map((m) => m.machineId);
  const events = await db.selectFrom('events').select('event_id').where('machine_id', 'in', ids).execute();
  const sales = await db.selectFrom('sales').select('event_id').where('machine_id', 'in', ids).execute();
  const seen = new Map<string, number>();
  for (const r of [...events, ...sales]) seen.set(r.event_id, (seen.get(r.event_id) ?? 0) + 1);
  const totals = await db
    .selectFrom('daily_totals')
    .select((eb) => eb.fn.sum<number>('paid_count').as('n'))
    .where('machine_id', 'in', ids)
    .executeTakeFirst();
  return {
    sent: sent.size,
    stored: events.length,
    missing: [...sent].filter((id) => !seen.has(id)),
    unknown: [...seen.keys()].filter((id) => !sent.has(id)),
    twice: [...seen].filter(([, n]) => n > 2).map(([id]) => id),
    counted: Number(totals?.n ?? 0),
  };
}
