/**
 * The fleet link cannot hurt payments (issue 15, design section 10): vend approval in a static QR
 * session while the MQTT broker is stalled. The daemon reaches a real broker (aedes on loopback)
 * through a TCP gate (src/sim/broker/tcp-gate.ts); the gate is then set to `stalled`: the TCP
 * connection stays up and nothing is forwarded either way (a hung broker: no PUBACK, no PINGRESP,
 * the fleet worker's publishes pile up). The figure is the vend approval latency during the stall;
 * the context has the same vends just before it, with the broker answering (the baseline on this
 * machine at this moment), and how many commands the device received meanwhile (none can arrive).
 */
import { measured, notMeasured, DAEMON_PENDING, type Figure } from './figure.js';
import { Budget, sleep } from './support/budget.js';
import { daemonBuilt } from './support/daemon.js';
import type { GatewayProcess } from './support/gateway.js';
import { endSession, openStaticSession, runVends } from './support/vmc.js';
import { createRig } from '../src/sim/rig.js';
import { startAedesBroker, startTcpGate } from '../src/sim/broker/index.js';
import { round, summarize } from './stats.js';

const VENDS = 1000;
const BASE = {
  id: 'vend-latency-broker-stalled',
  what: 'Vend approval in a static QR session while the fleet broker is stalled (TCP up, nothing answered)',
  unit: 'ms',
  target: { text: 'p99 <= 1 ms (design section 7)', checks: [{ stat: 'p99' as const, op: '<=' as const, limit: 1 }] },
};

export async function benchFleetBrokerStall(budget: Budget, gateway: GatewayProcess): Promise<Figure[]> {
  if (!daemonBuilt()) return [notMeasured(BASE, 'pending', DAEMON_PENDING)];
  const broker = await startAedesBroker();
  const gate = await startTcpGate({ port: broker.port });
  let rig: Awaited<ReturnType<typeof createRig>> | null = null;
  try {
    rig = await createRig({
      vmc: { vendPolicy: 'manual' },
      config: {
        gateway: { baseUrl: gateway.url },
        staticQr: { preauthAmount: 100_000 },
        mdb: { alwaysIdle: false, sessionIdleTimeoutMs: 600_000 },
        fleet: { url: gate.url, protocolVersion: 4, machineId: 'BENCH-FLEET-1', healthIntervalS: 5, keepaliveS: 5 },
      },
    });
    const agent = await rig.startAgent(30_000);
    await agent.waitForLog((l) => l.msg === 'fleet link connected', 15_000, 'the fleet link to connect');
    const files = { configPath: rig.configFile, secretToken: rig.secretToken, startUrl: agent.startOrigin!, integratorName: rig.integratorName, uniQr: rig.uniQr };
    await openStaticSession(rig.vmc, files, Math.min(30_000, budget.leftMs));
    const baseline = summarize((await runVends(rig.vmc, VENDS / 2, { price: 1, gapMs: 5, budget })).latencies);
    gate.setMode('stalled');
    await sleep(1_000); // the fleet worker's next publishes (status, health) go into the stall
    const run = await runVends(rig.vmc, VENDS, { price: 1, gapMs: 5, budget });
    endSession(rig.vmc);
    const keepaliveLost = agent.logs.some((l) => l.msg === 'fleet link lost; reconnecting');
    const target = {
      text: 'p99 <= 1 ms (design section 7) and <= 1.5 x the same vends with the broker up',
      checks: [...BASE.target.checks, ...(baseline.p99 !== null ? [{ stat: 'p99' as const, op: '<=' as const, limit: round(baseline.p99 * 1.5), derived: `1.5 x broker-up p99 (${round(baseline.p99)} ms)` }] : [])],
    };
    return [
      measured(
        { ...BASE, target, context: { baselineBrokerUpP50Ms: round(baseline.p50), baselineBrokerUpP99Ms: round(baseline.p99), vendGapMs: 5, fleetLinkDroppedDuringStall: keepaliveLost, budgetStopped: run.stoppedByBudget } },
        { samples: run.latencies.length, summary: summarize(run.latencies) },
      ),
    ];
  } catch (err) {
    return [notMeasured(BASE, 'error', (err as Error).message)];
  } finally {
    await rig?.close();
    await gate.close();
    await broker.close();
  }
}
