/**
 * The fleet simulation (docs/decisions/fleet-link-first.md item 4): one local mosquitto, N simulated machines in a
 * child
 * process (one MQTT connection each), and the operator side in this process running the same code
 * as `qrvend fleet watch`, `status` and `cmd`. Loopback only, bounded in machines and seconds.
 *
 * Measured: event latency from the machine's publish to the operator's watch receiving it (both
 * instants on the system-wide monotonic clock), `fleet status` time for the whole fleet (the
 * library and the real CLI), command round trips, the broker's CPU and memory (/proc), and the
 * device side's cost per sale event (CPU of the machines' process, bytes its connections wrote).
 * The real daemon's bytes written to SQLite per event are not here: the daemon's benchmarks
 * measure them (bytes per sale).
 */
import { fork, execFile } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { startMosquitto, type MosquittoBroker } from '../broker/mosquitto-broker.js';
import { collectFleetStatus, connectFleet, sendFleetCommand, watchFleet } from '../../src/fleet/operator/index.js';
import { percentile, processCpuMs, processMemoryKiB } from './proc-stats.js';
import { publishedAtNs, type FromMachines, type RunFigures, type ToMachines } from './messages.js';

export const FleetSimOptions = z.strictObject({
  machines: z.number().int().min(1).max(20_000).default(1000),
  seconds: z.number().int().min(1).max(600).default(30),
  /** Sales per second over the whole fleet. */
  salesPerSecond: z.number().min(0).max(20_000).default(100),
  healthIntervalS: z.number().int().min(1).max(3600).default(30),
  alarmsPerSecond: z.number().min(0).max(1000).default(1),
  protocol: z.union([z.literal(4), z.literal(5)]).default(5),
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,64}$/)
    .default('qrvend'),
  seed: z.number().int().default(1),
  connectConcurrency: z.number().int().min(1).max(500).default(50),
  /** Command round trips measured after the run (to machines in turn). */
  pings: z.number().int().min(0).max(10_000).default(50),
  /** The command of those round trips: ping, or e.g. `start` answered by `handlersModule`. */
  command: z.strictObject({ name: z.string(), args: z.unknown().optional() }).default({ name: 'ping' }),
  /** Machines whose connection is cut at the end (their last will must reach the operator). */
  crash: z.number().int().min(0).max(20_000).default(10),
  /** Also time the real `qrvend fleet status --json` (a child process). */
  cli: z.boolean().default(true),
  handlersModule: z.string().optional(),
});
export type FleetSimOptions = z.input<typeof FleetSimOptions>;

const round = (x: number, digits = 2) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : null);

function latencySummary(ms: number[]) {
  return {
    count: ms.length,
    p50: round(percentile(ms, 50)),
    p90: round(percentile(ms, 90)),
    p99: round(percentile(ms, 99)),
    max: round(percentile(ms, 100)),
  };
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

export async function runFleetSim(input: FleetSimOptions, log: (line: string) => void = () => undefined) {
  const o = FleetSimOptions.parse(input);
  const started = new Date().toISOString();
  const loadBefore = loadavg()[0] ?? NaN;
  let broker: MosquittoBroker | null = null;
  const child = fork(fileURLToPath(new URL('./machines-process.js', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const inbox: FromMachines[] = [];
  let childExit: string | null = null;
  child.on('message', (m: FromMachines) => inbox.push(m));
  child.once('exit', (code, signal) => (childExit = `machines process ended (${signal ?? code})`));
  const next = async <T extends FromMachines['type']>(
    type: T,
    timeoutMs: number,
  ): Promise<Extract<FromMachines, { type: T }>> => {
    const ok = await until(
      () => inbox.some((m) => m.type === type || m.type === 'error') || childExit !== null,
      timeoutMs,
    );
    const found = inbox.find((m) => m.type === type || m.type === 'error');
    if (found?.type === 'error') throw new Error(`machines process: ${found.message}`);
    if (!ok || !found) throw new Error(childExit ?? `machines process: no ${type} within ${timeoutMs} ms`);
    inbox.splice(inbox.indexOf(found), 1);
    return found as Extract<FromMachines, { type: T }>;
  };
  const tell = (m: ToMachines) => child.send(m);
  const operators: { endAsync(force?: boolean): Promise<void> }[] = [];
  try {
    broker = await startMosquitto({ maxOpenFiles: o.machines + 1024 });
    const brokerPid = broker.pid!;
    log(`mosquitto on ${broker.url} (pid ${brokerPid}); connecting ${o.machines} machines`);
    const rssIdle = processMemoryKiB(brokerPid).rssKiB;
    tell({
      type: 'start',
      url: broker.url,
      prefix: o.prefix,
      machines: o.machines,
      protocol: o.protocol,
      seed: o.seed,
      connectConcurrency: o.connectConcurrency,
      handlersModule: o.handlersModule,
    });
    const ready = await next('ready', 120_000 + o.machines * 100);
    log(`${ready.machines} machines connected in ${Math.round(ready.connectMs)} ms`);

    const conn = { url: broker.url, prefix: o.prefix, protocol: String(o.protocol) as '4' | '5' };
    // fleet status, as the CLI does it, for the whole fleet.
    const statusClient = await connectFleet(conn, { purpose: 'sim-status' });
    operators.push(statusClient.client);
    const status = await collectFleetStatus(statusClient.client, {
      prefix: o.prefix,
      expect: o.machines,
      maxWaitMs: 60_000,
    });
    await statusClient.client.endAsync(true);
    log(`fleet status: ${status.view.machines.size} machines in ${Math.round(status.elapsedMs)} ms`);
    let cli: { ms: number; machines: number; exitCode: number | null } | null = null;
    if (o.cli) {
      const t0 = performance.now();
      cli = await new Promise((resolve) => {
        execFile(
          process.execPath,
          [
            fileURLToPath(new URL('../../src/cli/main.js', import.meta.url)),
            'fleet',
            'status',
            '--json',
            '--url',
            broker!.url,
            '--prefix',
            o.prefix,
            '--wait',
            '60000',
          ],
          { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
          (err, stdout) => {
            let machines = 0;
            try {
              machines = (JSON.parse(stdout) as { machines: unknown[] }).machines.length;
            } catch {
              machines = 0;
            }
            resolve({
              ms: performance.now() - t0,
              machines,
              exitCode: err ? ((err as { code?: number }).code ?? null) : 0,
            });
          },
        );
      });
      log(`qrvend fleet status --json: ${cli!.machines} machines, ${Math.round(cli!.ms)} ms (process start to exit)`);
    }

    // fleet watch, as the CLI does it: latencies from the machines' publish instants.
    const watchClient = await connectFleet(conn, { purpose: 'sim-watch' });
    operators.push(watchClient.client);
    const latencies: number[] = [];
    let sales = 0;
    let alarms = 0;
    const offline = new Set<string>();
    const watch = await watchFleet(watchClient.client, o.prefix, {
      onEvent(_machineId, event) {
        const t1 = process.hrtime.bigint();
        if (event.kind === 'sale') {
          sales += 1;
          const t0 = publishedAtNs(event.eventId);
          if (t0 !== null) latencies.push(Number(t1 - t0) / 1e6);
        } else {
          alarms += 1;
        }
      },
      onPresence(machineId, s) {
        if (!s.online) offline.add(machineId);
      },
    });

    const cpu0 = processCpuMs(brokerPid);
    const wall0 = performance.now();
    let rssPeak = 0;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, processMemoryKiB(brokerPid).rssKiB);
    }, 500);
    log(
      `running ${o.seconds} s: ${o.salesPerSecond} sales/s, health every ` +
        `${o.healthIntervalS} s per machine, ${o.alarmsPerSecond} alarm events/s`,
    );
    tell({
      type: 'run',
      seconds: o.seconds,
      salesPerSecond: o.salesPerSecond,
      healthIntervalS: o.healthIntervalS,
      alarmsPerSecond: o.alarmsPerSecond,
    });
    const ran = (await next('ran', o.seconds * 1000 + 60_000)).figures as RunFigures;
    await until(() => sales >= ran.salesAcked, 10_000);
    clearInterval(sampler);
    const brokerCpuMs = processCpuMs(brokerPid) - cpu0;
    const brokerWallMs = performance.now() - wall0;
    const mem = processMemoryKiB(brokerPid);
    rssPeak = Math.max(rssPeak, mem.rssKiB);
    log(`published ${ran.salesPublished} sales, operator received ${sales}`);

    // fleet cmd: round trips (ping unless told otherwise).
    const cmdClient = await connectFleet(conn, { purpose: 'sim-cmd' });
    operators.push(cmdClient.client);
    const rtts: number[] = [];
    let cmdFailures = 0;
    const width = String(o.machines).length < 4 ? 4 : String(o.machines).length;
    for (let i = 0; i < o.pings; i += 1) {
      const machineId = `vm-${String(((i * 7919) % o.machines) + 1).padStart(width, '0')}`;
      try {
        const r = await sendFleetCommand(cmdClient.client, {
          prefix: o.prefix,
          machineId,
          name: o.command.name,
          args: o.command.args,
          timeoutMs: 5_000,
          protocol: cmdClient.protocol,
        });
        if (r.reply.ok) rtts.push(r.elapsedMs);
        else cmdFailures += 1;
      } catch {
        cmdFailures += 1;
      }
    }

    // Power cuts: the last wills reach the watcher.
    tell({ type: 'crash', count: Math.min(o.crash, o.machines) });
    const crashed = await next('crashed', 30_000);
    await until(() => crashed.machineIds.every((id) => offline.has(id)), 10_000);
    const willsSeen = crashed.machineIds.filter((id) => offline.has(id)).length;
    await watch.stop();

    const events = ran.salesPublished;
    const cpuMs = ran.cpuUserMs + ran.cpuSystemMs;
    const messages = ran.salesPublished + ran.alarmEvents * 2 + ran.healthMessages;
    return {
      what: 'npm run fleet-sim',
      started,
      host: {
        cpus: cpus().length,
        model: cpus()[0]?.model ?? null,
        loadavg1Before: round(loadBefore),
        loadavg1After: round(loadavg()[0] ?? NaN),
      },
      options: o,
      broker: {
        kind: 'mosquitto',
        cpuPercentOfOneCore: round((brokerCpuMs / brokerWallMs) * 100, 1),
        rssIdleMiB: round(rssIdle / 1024, 1),
        rssEndMiB: round(mem.rssKiB / 1024, 1),
        rssPeakMiB: round(rssPeak / 1024, 1),
        hwmMiB: round(mem.hwmKiB / 1024, 1),
      },
      connect: { machines: ready.machines, ms: round(ready.connectMs, 0) },
      status: {
        machines: status.view.machines.size,
        libraryMs: round(status.elapsedMs, 0),
        lastStatusMs: round(status.lastStatusMs, 0),
        malformed: status.view.bad.total,
        cli,
      },
      events: {
        salesPublished: ran.salesPublished,
        salesAcked: ran.salesAcked,
        salesFailed: ran.salesFailed,
        salesReceivedByOperator: sales,
        alarmEventsReceived: alarms,
        duplicatesSkipped: watch.view.duplicates,
        malformed: watch.view.bad.total,
        latencyMs: latencySummary(latencies),
      },
      commands: {
        command: o.command.name,
        requests: o.pings,
        ok: rtts.length,
        failed: cmdFailures,
        roundTripMs: latencySummary(rtts),
      },
      lastWill: { machinesCut: crashed.machineIds.length, offlineSeenByOperator: willsSeen },
      deviceSide: {
        note:
          'simulated machines (mqtt.js clients, no daemon): CPU and bytes of their ' +
          'process and connections. The real daemon also writes each event to SQLite; ' +
          'that is measured by the daemon benchmarks (bytes per sale), not here.',
        wallMs: round(ran.wallMs, 0),
        cpuMsTotal: round(cpuMs, 0),
        cpuPercentOfOneCore: round((cpuMs / ran.wallMs) * 100, 1),
        messagesSent: messages,
        cpuUsPerMessage: round((cpuMs * 1000) / Math.max(1, messages), 1),
        bytesSentPerSaleEvent: {
          payload: round(ran.salePayloadBytes, 0),
          publishPacket: round(ran.salePacketBytes, 0),
        },
        bytesSentAllTrafficPerSale: round(ran.bytesWritten / Math.max(1, events), 0),
        bytesSentTotal: ran.bytesWritten,
        healthMessages: ran.healthMessages,
      },
    };
  } finally {
    for (const c of operators) await c.endAsync(true).catch(() => undefined);
    if (child.connected) tell({ type: 'close' });
    await until(() => childExit !== null, 10_000);
    if (childExit === null) child.kill('SIGKILL');
    await broker?.close();
  }
}
