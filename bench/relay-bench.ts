/**
 * `npm run relay-bench`: the Start relay at fleet scale on one machine, loopback only.
 *
 *   - one local broker (aedes in-process; Debian's mosquitto with QRVEND_TEST_BROKER=mosquitto);
 *   - 1,000 simulated machines, each its own MQTT client with a retained status, answering
 *     `cmd/start` with the real Start decisions (src/start/relayed.ts over one shared StartCore
 *     whose payment side accepts at once: no ledger, no gateway; that part is canned);
 *   - `qrvend relay` as its own process (so its memory and CPU are its own);
 *   - the same Starts sent directly to a Start endpoint on loopback (the same StartCore), then
 *     through the relay, at a bounded rate: the relay's added latency is the difference;
 *   - then Starts back to back through the one replica: Starts per second.
 *
 * Bounded: about 3,000 + 3,000 paced Starts and at most 15 s of saturation. Prints one JSON object
 * and writes bench/relay-results.json.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '../src/core/log.js';
import { loadConfig } from '../src/config/load.js';
import { startTestBroker } from '../rigs/broker/index.js';
import { startSimMachines } from '../rigs/relay/machines.js';
import { closedLoop, openLoop, type LoadSample } from '../rigs/relay/load.js';
import {
  createRelayedStart,
  createStartCore,
  RelayVouchers,
  startStartEndpoint,
  type StartHooks,
} from '../src/start/index.js';
import { createTrustKit } from '../rigs/relay/trust-kit.js';
import { round, summarize } from './stats.js';

const MAIN_JS = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const RESULTS = fileURLToPath(new URL('../../bench/relay-results.json', import.meta.url));
const MACHINES = Number(process.env.RELAY_BENCH_MACHINES ?? 1000);
const PACED = Number(process.env.RELAY_BENCH_PACED ?? 3000);
const RATE = Number(process.env.RELAY_BENCH_RATE ?? 100);
const INTEGRATOR = 'bench-wallet';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

function procStatus(pid: number): { rssMb: number; hwmMb: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  return { rssMb: round(kb('VmRSS') / 1024, 1), hwmMb: round(kb('VmHWM') / 1024, 1) };
}

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime
}

function verdicts(samples: LoadSample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) {
    const key = s.verdict === 'Approved' ? 'Approved' : `${s.status}/${s.code ?? 'none'}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-relay-bench-'));
  const cleanups: Array<() => Promise<unknown> | unknown> = [() => rmSync(dir, { recursive: true, force: true })];
  try {
    const token = randomBytes(32).toString('hex');
    const terminalIds = Array.from({ length: MACHINES }, (_, i) => `BENCH-${String(i).padStart(5, '0')}`);
    const broker = await startTestBroker();
    cleanups.push(() => broker.close());
    const protocolVersion: 4 | 5 = broker.protocolVersions.includes(5) ? 5 : 4;

    // The machines' side: real Start decisions, a payment side that accepts at once.
    const { config } = loadConfig({ env: {} });
    const seen = new Set<string>();
    const hooks: StartHooks = {
      readerBusy: () => null,
      transactionSeen: (tx) => seen.has(tx),
      accept: async (r) => void seen.add(r.TransactionId),
    };
    const core = createStartCore({
      start: {
        ...config.start,
        listen: '127.0.0.1:0',
        integratorName: INTEGRATOR,
        rateLimit: { perSecond: 100_000, burst: 100_000 },
      },
      acceptedTerminalIds: terminalIds,
      acceptedUniQr: [],
      secretToken: Buffer.from(token),
      hooks,
      log: silentLogger(),
    });
    // The relay's keys, the machines' trust and the operator's signed registry of the 1,000 machines.
    const kit = createTrustKit({
      machines: terminalIds.map((id) => ({ machineId: id, terminalId: id, uniQr: null })),
      token,
      integratorName: INTEGRATOR,
    });
    cleanups.push(() => kit.remove());
    // One set of Start decisions for every machine; each machine checks vouchers for itself.
    const relayedOf = new Map<string, ReturnType<typeof createRelayedStart>>();
    const relayed = (machineId: string) => {
      let r = relayedOf.get(machineId);
      if (r === undefined)
        relayedOf.set(
          machineId,
          (r = createRelayedStart({ core, vouchers: new RelayVouchers(kit.machineKeyring, machineId) })),
        );
      return r;
    };
    cleanups.push(() => relayedOf.forEach((r) => r.dropAll('bench over')));
    const direct = await startStartEndpoint({
      start: { ...config.start, listen: '127.0.0.1:0', integratorName: INTEGRATOR, maxConnectionsPerSource: 64 },
      acceptedTerminalIds: terminalIds,
      acceptedUniQr: [],
      secretToken: Buffer.from(token),
      hooks,
      log: silentLogger(),
      core,
      limits: { maxConnections: 256 },
    });
    cleanups.push(() => direct.close());
    const connectStarted = performance.now();
    const sims = await startSimMachines({
      url: broker.url,
      protocolVersion,
      signer: kit.machineSigner,
      machines: terminalIds.map((id) => ({ machineId: id, terminalId: id, uniQr: null })),
      answer: (m, args) => relayed(m).start(args),
      confirm: (m, args) => void relayed(m).confirm(args),
    });
    cleanups.push(() => sims.close());
    const machinesUpMs = performance.now() - connectStarted;

    // The relay, its own process.
    const port = await freePort();
    const configFile = join(dir, 'relay.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        relay: {
          listen: `127.0.0.1:${port}`,
          broker: { url: broker.url, protocolVersion },
          rateLimit: { perSecond: 10_000, burst: 10_000 },
          maxConnectionsPerSource: 512,
          logLevel: 'info',
          ...kit.relayConfig(),
        },
      }),
    );
    const child = spawn(process.execPath, [MAIN_JS, 'relay', '--config', configFile], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    cleanups.push(
      () =>
        new Promise<void>((resolve) =>
          child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM')),
        ),
    );
    const origin = `http://127.0.0.1:${port}`;
    const mapStarted = performance.now();
    for (;;) {
      if (performance.now() - mapStarted > 60_000) throw new Error('the relay did not learn the machines within 60 s');
      try {
        const health = (await (await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(2_000) })).json()) as {
          machines: number;
        };
        if (health.machines >= MACHINES) break;
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const mapMs = performance.now() - mapStarted;
    const idle = procStatus(child.pid!);

    let n = 0;
    const bodyFor = () => {
      n += 1;
      return JSON.stringify({
        AppUserId: 'bench-user',
        SecretToken: token,
        TerminalId: terminalIds[n % MACHINES],
        TransactionId: `bench-${process.pid}-${n}`,
      });
    };
    const directTarget = { origin: direct.origin, integratorName: INTEGRATOR };
    const relayTarget = { origin, integratorName: INTEGRATOR };
    // Warm-up (JIT, connection pools), not recorded.
    await openLoop(directTarget, bodyFor, { count: 300, perSecond: 300, maxInFlight: 32 });
    await openLoop(relayTarget, bodyFor, { count: 300, perSecond: 300, maxInFlight: 32 });

    const directSamples = await openLoop(directTarget, bodyFor, { count: PACED, perSecond: RATE, maxInFlight: 64 });
    const relaySamples = await openLoop(relayTarget, bodyFor, { count: PACED, perSecond: RATE, maxInFlight: 64 });
    const afterPaced = procStatus(child.pid!);

    const ticksBefore = cpuTicks(child.pid!);
    const saturated = await closedLoop(relayTarget, bodyFor, {
      concurrency: 64,
      durationMs: 15_000,
      maxCount: 200_000,
    });
    const ticksAfter = cpuTicks(child.pid!);
    const afterSaturation = procStatus(child.pid!);
    const d = summarize(directSamples.map((s) => s.ms));
    const r = summarize(relaySamples.map((s) => s.ms));
    const result = {
      at: new Date().toISOString(),
      broker: broker.kind,
      protocolVersion,
      machines: MACHINES,
      machinesConnectedMs: round(machinesUpMs, 0),
      relayMapBuiltMs: round(mapMs, 0),
      paced: { perSecond: RATE, count: PACED },
      directMs: { p50: round(d.p50, 2), p99: round(d.p99, 2), max: round(d.max, 2) },
      relayMs: { p50: round(r.p50, 2), p99: round(r.p99, 2), max: round(r.max, 2) },
      addedMs: { p50: round(r.p50 - d.p50, 2), p99: round(r.p99 - d.p99, 2) },
      directVerdicts: verdicts(directSamples),
      relayVerdicts: verdicts(relaySamples),
      saturation: {
        concurrency: 64,
        starts: saturated.samples.length,
        seconds: round(saturated.elapsedMs / 1000, 2),
        startsPerSecond: round(saturated.samples.length / (saturated.elapsedMs / 1000), 0),
        p50Ms: round(summarize(saturated.samples.map((s) => s.ms)).p50, 2),
        p99Ms: round(summarize(saturated.samples.map((s) => s.ms)).p99, 2),
        verdicts: verdicts(saturated.samples),
        relayCpuPercentOfOneCore: round(((ticksAfter - ticksBefore) / 100 / (saturated.elapsedMs / 1000)) * 100, 0),
      },
      relayMemory: {
        idleWithMapMb: idle.rssMb,
        afterPacedMb: afterPaced.rssMb,
        afterSaturationMb: afterSaturation.rssMb,
        peakMb: afterSaturation.hwmMb,
      },
    };
    writeFileSync(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    for (const step of cleanups.reverse()) await Promise.resolve(step()).catch(() => {});
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`relay-bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
