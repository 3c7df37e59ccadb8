/**
 * The fleet link cannot hurt payments (docs/decisions/fleet-link-first.md, docs/decisions/fleet-link.md): vend approval
 * in a static QR
 * session while the MQTT broker is stalled. The daemon reaches a real broker (aedes on loopback)
 * through a TCP gate (rigs/broker/tcp-gate.ts); the gate is then set to `stalled`: the TCP
 * connection stays up and nothing is forwarded either way (a hung broker: no PUBACK, no PINGRESP,
 * the fleet worker's publishes pile up). Before the stall, the same rig with the broker answering
 * (`vend-latency-broker-up`, the control) and with an operator sending signed and forged commands
 * (`vend-latency-signed-commands`). Judged like every vend figure (docs/decisions/targets.md): p99 over the
 * floor's p99 (pty-floor.ts), the floor measured in blocks alternating with the daemon's.
 *
 * The rig is vend-latency-idle's (DaemonRig: the daemon through the launcher, the VMC end read on
 * the event loop as the floor's is, the gateway in its own process) with `fleet.url` set, and the
 * broker, its gate and the operator's traffic run in a process of their own (support/broker.ts):
 * so a difference from vend-latency-idle is the fleet link's. Until docs/decisions/smallest-boards.md this figure ran
 * on
 * rigs/rig.ts, whose VMC end reads the pty through serialport (a libuv thread-pool round trip
 * per chunk) while the floor's does not, with aedes, the gate and the operator in the bench's own
 * process: that measured the rig, not the link (BENCHMARKS.md).
 */
import { join } from 'node:path';
import { notMeasured, DAEMON_PENDING, type Figure } from './figure.js';
import { Budget, sleep, waitFor } from './support/budget.js';
import { BrokerProcess } from './support/broker.js';
import { daemonBuilt } from './support/daemon.js';
import type { GatewayProcess } from './support/gateway.js';
import { DaemonRig } from './support/rig.js';
import { endSession, openStaticSession, runVends } from './support/vmc.js';
import { EchoFloor } from './pty-floor.js';
import { interleave, ratioFigure } from './vend-latency.js';

const VENDS = 1000;
/**
 * Vends before the first window: the daemon's first thousand or so vends after its start cost its
 * main thread more (the JIT, the start's garbage): 5.1-6.1 % of a core in a first window of 1,000
 * against 3.8-4.7 % in the next, link on or off (BENCHMARKS.md). A machine vends for days after a
 * start; the control must not be the only figure that pays the warm-up.
 */
const DAEMON_WARM_UP_VENDS = 1000;
const PREAUTH = 100_000;
const MACHINE_ID = 'BENCH-FLEET-1';
const BASE = {
  id: 'vend-latency-broker-stalled',
  what:
    'Vend approval in a static QR session while the fleet broker is ' +
    'stalled (TCP up, nothing answered), p99 over the floor p99',
  unit: 'x floor',
  target: {
    text: "p99 <= 1.0 x the floor's p99 (same run, interleaved blocks)",
    checks: [{ stat: 'value' as const, op: '<=' as const, limit: 1 }],
  },
};

/**
 * The vend path with operator commands flowing (docs/decisions/fleet-trust.md): signed and forged commands at
 * COMMANDS_PER_S each while the vends run, the broker answering. Judged like every vend figure.
 */
const COMMANDS_PER_S = 20;
const SIGNED = {
  ...BASE,
  id: 'vend-latency-signed-commands',
  what:
    `Vend approval in a static QR session while an operator sends ${COMMANDS_PER_S} signed and ` +
    `${COMMANDS_PER_S} forged commands a second over the fleet link, p99 over the floor p99`,
};

/** The control of the same run: the broker answering (judged against the same target). */
const UP = {
  ...BASE,
  id: 'vend-latency-broker-up',
  what:
    'Vend approval in a static QR session with the fleet link up ' +
    '(the control of the stalled figure), p99 over the floor p99',
};

const CONNECTED = 'fleet link connected';
const LOST = 'fleet link lost; reconnecting';

export async function benchFleetBrokerStall(budget: Budget, gateway: GatewayProcess): Promise<Figure[]> {
  if (!daemonBuilt()) return [UP, SIGNED, BASE].map((b) => notMeasured(b, 'pending', DAEMON_PENDING));
  let broker: BrokerProcess | null = null;
  let rig: DaemonRig | null = null;
  let floor: EchoFloor | null = null;
  try {
    const b = (broker = await BrokerProcess.start());
    rig = await DaemonRig.start({
      gatewayUrl: gateway.url,
      preauthAmount: PREAUTH,
      watchLogs: [CONNECTED, LOST],
      patch: (c, dir) => {
        c.fleet = {
          url: b.gateUrl,
          protocolVersion: 4,
          machineId: MACHINE_ID,
          healthIntervalS: 5,
          keepaliveS: 5,
          trustFile: b.trustFile,
          configOverlay: join(dir, 'state', 'fleet-config.json'),
        };
      },
    });
    const connected = rig.daemon.watch(CONNECTED);
    if (!(await waitFor(() => connected.seen() > 0, 15_000, 50)))
      throw new Error(`the fleet link did not connect within 15 s: ${rig.daemon.describeProblems()}`);
    await openStaticSession(rig.sim, rig.files, Math.min(30_000, budget.leftMs));
    floor = await EchoFloor.start();
    await runVends(rig.sim, DAEMON_WARM_UP_VENDS, { price: 1, gapMs: 5, budget });
    const pid = rig.daemon.pid;
    // The control: the same rig and the same interleaving with the broker answering, so a
    // difference between the figures is the stall's or the commands', not this rig's.
    const up = await interleave(floor.sim, rig.sim, pid, budget, 5, VENDS / 5);
    await b.startTraffic('qrvend', MACHINE_ID, COMMANDS_PER_S);
    const signed = await interleave(floor.sim, rig.sim, pid, budget, 5, VENDS / 5);
    const commands = await b.stopTraffic();
    await b.setMode('stalled');
    await sleep(1_000); // the fleet worker's next publishes (status, health) go into the stall
    const lostBefore = rig.daemon.watch(LOST).seen();
    const run = await interleave(floor.sim, rig.sim, pid, budget, 5, VENDS / 5);
    endSession(rig.sim);
    return [
      ratioFigure(UP, up),
      ratioFigure(SIGNED, signed, {
        commandsSent: commands.sent,
        commandsAnswered: commands.answered,
        commandsRefused: commands.refused,
      }),
      ratioFigure(BASE, run, { fleetLinkDroppedDuringStall: rig.daemon.watch(LOST).seen() > lostBefore }),
    ];
  } catch (err) {
    return [UP, SIGNED, BASE].map((base) => notMeasured(base, 'error', (err as Error).message));
  } finally {
    await floor?.stop();
    await rig?.stop();
    await broker?.stop();
  }
}
