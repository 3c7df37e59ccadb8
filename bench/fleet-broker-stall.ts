/**
 * The fleet link cannot hurt payments (issue 15, design section 10): vend approval in a static QR
 * session while the MQTT broker is stalled. The daemon reaches a real broker (aedes on loopback)
 * through a TCP gate (src/sim/broker/tcp-gate.ts); the gate is then set to `stalled`: the TCP
 * connection stays up and nothing is forwarded either way (a hung broker: no PUBACK, no PINGRESP,
 * the fleet worker's publishes pile up). The figure is the vend approval latency during the stall;
 * the context has the same vends just before it, with the broker answering (the baseline on this
 * machine at this moment). Judged like every vend figure (design section 7): p99 over the floor's
 * p99 (pty-floor.ts), the floor measured in blocks alternating with the daemon's during the stall.
 */
import { notMeasured, DAEMON_PENDING, type Figure } from './figure.js';
import { Budget, sleep } from './support/budget.js';
import { daemonBuilt } from './support/daemon.js';
import type { GatewayProcess } from './support/gateway.js';
import { endSession, openStaticSession } from './support/vmc.js';
import { createRig } from '../src/sim/rig.js';
import { startAedesBroker, startTcpGate } from '../src/sim/broker/index.js';
import { EchoFloor } from './pty-floor.js';
import { interleave, ratioFigure } from './vend-latency.js';
import { commandTraffic } from './support/command-traffic.js';

const VENDS = 1000;
const BASE = {
  id: 'vend-latency-broker-stalled',
  what: 'Vend approval in a static QR session while the fleet broker is stalled (TCP up, nothing answered), p99 over the floor p99',
  unit: 'x floor',
  target: { text: "p99 <= 1.0 x the floor's p99 (same run, interleaved blocks)", checks: [{ stat: 'value' as const, op: '<=' as const, limit: 1 }] },
};

/**
 * The vend path with operator commands flowing (issue 31): signed and forged commands at
 * COMMANDS_PER_S each while the vends run, the broker answering. Judged like every vend figure.
 */
const COMMANDS_PER_S = 20;
const SIGNED = {
  ...BASE,
  id: 'vend-latency-signed-commands',
  what: `Vend approval in a static QR session while an operator sends ${COMMANDS_PER_S} signed and ${COMMANDS_PER_S} forged commands a second over the fleet link, p99 over the floor p99`,
};

/** The control of the same run: the broker answering (a reference, judged against the same target). */
const UP = {
  ...BASE,
  id: 'vend-latency-broker-up',
  what: 'Vend approval in a static QR session with the fleet link up (the control of the stalled figure), p99 over the floor p99',
};

export async function benchFleetBrokerStall(budget: Budget, gateway: GatewayProcess): Promise<Figure[]> {
  if (!daemonBuilt()) return [notMeasured(BASE, 'pending', DAEMON_PENDING)];
  const broker = await startAedesBroker();
  const gate = await startTcpGate({ port: broker.port });
  let rig: Awaited<ReturnType<typeof createRig>> | null = null;
  let floor: EchoFloor | null = null;
  const traffic = commandTraffic();
  try {
    rig = await createRig({
      vmc: { vendPolicy: 'manual' },
      config: {
        gateway: { baseUrl: gateway.url },
        staticQr: { preauthAmount: 100_000 },
        mdb: { alwaysIdle: false, sessionIdleTimeoutMs: 600_000 },
        fleet: { url: gate.url, protocolVersion: 4, machineId: 'BENCH-FLEET-1', healthIntervalS: 5, keepaliveS: 5, trustFile: traffic.trustFile },
      },
    });
    const agent = await rig.startAgent(30_000);
    await agent.waitForLog((l) => l.msg === 'fleet link connected', 15_000, 'the fleet link to connect');
    const files = { configPath: rig.configFile, secretToken: rig.secretToken, startUrl: agent.startOrigin!, integratorName: rig.integratorName, uniQr: rig.uniQr };
    await openStaticSession(rig.vmc, files, Math.min(30_000, budget.leftMs));
    floor = await EchoFloor.start();
    // The control: the same rig and the same interleaving with the broker answering, so a
    // difference between the two figures is the stall's, not this rig's.
    const up = await interleave(floor.sim, rig.vmc, agent.child.pid!, budget, 5, VENDS / 5);
    await traffic.start(broker.url, 'qrvend', 'BENCH-FLEET-1', COMMANDS_PER_S);
    const signed = await interleave(floor.sim, rig.vmc, agent.child.pid!, budget, 5, VENDS / 5);
    const commands = await traffic.stop();
    gate.setMode('stalled');
    await sleep(1_000); // the fleet worker's next publishes (status, health) go into the stall
    const run = await interleave(floor.sim, rig.vmc, agent.child.pid!, budget, 5, VENDS / 5);
    endSession(rig.vmc);
    const keepaliveLost = agent.logs.some((l) => l.msg === 'fleet link lost; reconnecting');
    return [ratioFigure(UP, up), ratioFigure(SIGNED, signed, { commandsSent: commands.sent, commandsAnswered: commands.answered, commandsRefused: commands.refused }), ratioFigure(BASE, run, { fleetLinkDroppedDuringStall: keepaliveLost })];
  } catch (err) {
    return [notMeasured(BASE, 'error', (err as Error).message)];
  } finally {
    await traffic.stop();
    await floor?.stop();
    await rig?.close();
    await gate.close();
    await broker.close();
  }
}
