/**
 * Cold start to reader enabled (docs/decisions/targets.md: <= 0.5 s). From spawning
 * `node dist/src/cli/main.js run` until the VMC end of the pty has read `C,1`: Node's own start,
 * loading the code, configuration, the ledger (opened and checked), the workers, the serial port,
 * and the board handshake. Each run gets a fresh pty and ledger; the file cache is warm after the
 * first (a boot from an SD card is slower, which is why the worst run is judged).
 */
import { measured, notMeasured, DAEMON_PENDING, type Figure } from './figure.js';
import { Budget } from './support/budget.js';
import { daemonBuilt } from './support/daemon.js';
import type { GatewayProcess } from './support/gateway.js';
import { DaemonRig } from './support/rig.js';
import { summarize } from './stats.js';

const TARGET = {
  text: '<= 0.5 s (every start: judged on the worst run)',
  checks: [{ stat: 'max' as const, op: '<=' as const, limit: 500 }],
};
const BASE = {
  id: 'cold-start',
  what: 'Cold start to reader enabled (spawn until C,1 read on the VMC end)',
  unit: 'ms',
  target: TARGET,
};

export async function benchColdStart(budget: Budget, gateway: GatewayProcess, runs = 7): Promise<Figure[]> {
  if (!daemonBuilt()) return [notMeasured(BASE, 'pending', DAEMON_PENDING)];
  const samples: number[] = [];
  try {
    for (let i = 0; i < runs && !budget.spent; i++) {
      const rig = await DaemonRig.start({
        gatewayUrl: gateway.url,
        preauthAmount: 10,
        enableTimeoutMs: Math.max(1000, Math.min(30_000, budget.leftMs)),
      });
      samples.push(rig.coldStartMs);
      await rig.stop();
    }
    return [
      measured(
        { ...BASE, context: { runs: samples.length, firstRunMs: Math.round(samples[0] ?? Number.NaN) } },
        { samples: samples.length, summary: summarize(samples) },
      ),
    ];
  } catch (err) {
    return [notMeasured({ ...BASE, context: { runsDone: samples.length } }, 'error', (err as Error).message)];
  }
}
