/**
 * The child process of the fleet simulation: N simulated machines, each its own MQTT connection
 * (retained status with a last will, QoS 1 sales with eventIds, QoS 0 health, commands answered),
 * driven by messages from the parent (rigs/fleet/messages.ts). Kept apart from the operator
 * side so the device side's CPU is measured on its own.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ALARM_CODES, machineTopics } from '../../src/fleet/contract/index.js';
import { seededRandom } from '../../src/sim/seeded-random.js';
import { SimulatedMachine, type CommandHandler } from './machine.js';
import { simEventId, type FromMachines, type RunFigures, type ToMachines } from './messages.js';

const machines: SimulatedMachine[] = [];
let prefix = 'qrvend';
let random = seededRandom(1);

function send(message: FromMachines): void {
  process.send?.(message);
}

/** The PUBLISH packet of a QoS 1 message: fixed header, topic, packet id, (MQTT 5: property length), payload. */
function publishPacketBytes(topicBytes: number, payloadBytes: number, protocol: 4 | 5): number {
  const remaining = 2 + topicBytes + 2 + (protocol === 5 ? 1 : 0) + payloadBytes;
  const lengthBytes = remaining < 128 ? 1 : remaining < 16_384 ? 2 : remaining < 2_097_152 ? 3 : 4;
  return 1 + lengthBytes + remaining;
}

/** Command handlers beyond the built-in ping, from `handlersModule` (the relay's simulation plugs `start` in there). */
let extraHandlers: Record<string, CommandHandler> = {};

async function start(m: Extract<ToMachines, { type: 'start' }>): Promise<void> {
  prefix = m.prefix;
  if (m.handlersModule !== undefined) {
    const loaded = (await import(pathToFileURL(resolve(m.handlersModule)).href)) as {
      handlers?: Record<string, CommandHandler>;
    };
    if (typeof loaded.handlers !== 'object' || loaded.handlers === null)
      throw new Error(`${m.handlersModule} exports no \`handlers\` object`);
    extraHandlers = loaded.handlers;
  }
  random = seededRandom(m.seed);
  const t0 = performance.now();
  const width = String(m.machines).length < 4 ? 4 : String(m.machines).length;
  let next = 0;
  const worker = async () => {
    while (next < m.machines) {
      const i = next++;
      const machineId = `vm-${String(i + 1).padStart(width, '0')}`;
      let seq = 0;
      const machine = await SimulatedMachine.connect({
        url: m.url,
        prefix,
        machineId,
        protocol: m.protocol,
        handlers: extraHandlers,
        keepaliveS: 60,
        eventId: () => simEventId(machineId, ++seq, process.hrtime.bigint()),
      });
      machines.push(machine);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, m.connectConcurrency) }, worker));
  send({ type: 'ready', connectMs: performance.now() - t0, machines: machines.length });
}

async function run(m: Extract<ToMachines, { type: 'run' }>): Promise<void> {
  const f: RunFigures = {
    wallMs: 0,
    salesPublished: 0,
    salesAcked: 0,
    salesFailed: 0,
    alarmEvents: 0,
    healthMessages: 0,
    statusUpdates: 0,
    cpuUserMs: 0,
    cpuSystemMs: 0,
    bytesWritten: 0,
    salePayloadBytes: 0,
    salePacketBytes: 0,
  };
  const n = machines.length;
  const bytes0 = machines.reduce((sum, x) => sum + x.bytesWritten(), 0);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const durationMs = m.seconds * 1000;
  const pending: Promise<unknown>[] = [];
  let payloadSum = 0;
  let packetSum = 0;
  let healthRound = 0;
  const topicBytes = Buffer.byteLength(machineTopics(prefix, machines[0]?.machineId ?? 'x').events);
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const elapsed = Math.min(performance.now() - t0, durationMs);
      const salesDue = Math.floor((m.salesPerSecond * elapsed) / 1000) - f.salesPublished;
      for (let k = 0; k < salesDue; k += 1) {
        const machine = machines[Math.floor(random() * n)]!;
        const { event, acked } = machine.sale();
        f.salesPublished += 1;
        const payload = Buffer.byteLength(JSON.stringify(event));
        payloadSum += payload;
        packetSum += publishPacketBytes(topicBytes, payload, machine.protocol);
        pending.push(
          acked.then(
            () => (f.salesAcked += 1),
            () => (f.salesFailed += 1),
          ),
        );
      }
      const healthDue = Math.floor((n * elapsed) / (m.healthIntervalS * 1000)) - f.healthMessages;
      for (let k = 0; k < healthDue; k += 1) {
        const machine = machines[healthRound++ % n]!;
        void machine
          .health({ vends: f.salesPublished, eventLoopDelayP99Ms: 0.4, rssMiB: 61, outboxPending: 0 })
          .catch(() => undefined);
        f.healthMessages += 1;
      }
      const alarmsDue = Math.floor((m.alarmsPerSecond * elapsed) / 1000) - f.alarmEvents;
      for (let k = 0; k < alarmsDue; k += 1) {
        const machine = machines[Math.floor(random() * n)]!;
        const code = ALARM_CODES[Math.floor(random() * 3)]!;
        const state = machine.status.alarms.includes(code) ? 'cleared' : 'raised';
        pending.push(machine.alarm(code, state, state === 'raised' ? 'simulated' : null).catch(() => undefined));
        f.alarmEvents += 1;
        f.statusUpdates += 1;
      }
      if (elapsed >= durationMs) {
        clearInterval(tick);
        resolve();
      }
    }, 10);
  });
  await Promise.race([Promise.allSettled(pending), new Promise((r) => setTimeout(r, 10_000))]);
  const cpu = process.cpuUsage(cpu0);
  f.wallMs = performance.now() - t0;
  f.cpuUserMs = cpu.user / 1000;
  f.cpuSystemMs = cpu.system / 1000;
  f.bytesWritten = machines.reduce((sum, x) => sum + x.bytesWritten(), 0) - bytes0;
  f.salePayloadBytes = f.salesPublished > 0 ? payloadSum / f.salesPublished : 0;
  f.salePacketBytes = f.salesPublished > 0 ? packetSum / f.salesPublished : 0;
  send({ type: 'ran', figures: f });
}

process.on('message', (message: ToMachines) => {
  const work = async () => {
    switch (message.type) {
      case 'start':
        return start(message);
      case 'run':
        return run(message);
      case 'crash': {
        const victims = machines.splice(0, Math.min(message.count, machines.length));
        for (const v of victims) v.crash();
        send({ type: 'crashed', machineIds: victims.map((v) => v.machineId) });
        return;
      }
      case 'close':
        await Promise.all(machines.map((x) => x.client.endAsync(true).catch(() => undefined)));
        process.exit(0);
    }
  };
  work().catch((err: unknown) => {
    send({ type: 'error', message: (err as Error).message });
    process.exit(1);
  });
});
// The parent went away: nothing to simulate for.
process.on('disconnect', () => process.exit(0));
