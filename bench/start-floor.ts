/**
 * The floor of the Static Start figure (support/start-floor-process.ts): a bare Node process with
 * the daemon's shape doing only what any agent must for a Start (two commits with the ledger's
 * pragmas, the answer, the Authorization on a kept-alive connection, C,START on a pty), on a pty
 * pair of its own with a VMC simulator on the other end, its SQLite file beside the daemon's
 * ledger. Measured in blocks alternating with the daemon's Starts (start-overhead.ts), never apart.
 */
import type { ChildProcess } from 'node:child_process';
import type { PtyPair } from '../test/support/pty.js';
import { OPERATIONS } from '../src/gateway/protocol/index.js';
import type { VmcSimulator } from '../src/sim/vmc/index.js';
import { stopForkedChild } from './support/child-stop.js';
import { forkOnPty } from './support/pty-helper.js';

export class StartFloor {
  private constructor(
    readonly sim: VmcSimulator,
    /** Where the wallet POSTs a Start (any path: the floor reads the body only). */
    readonly startUrl: string,
    private readonly child: ChildProcess,
    private readonly pty: PtyPair,
  ) {}

  /** The floor against `gatewayUrl` (the timing proxy), its SQLite file in `dir` (the daemon's scratch directory). */
  static async start(gatewayUrl: string, dir: string): Promise<StartFloor> {
    const script = new URL('./support/start-floor-process.js', import.meta.url);
    const { sim, child, pty, ready } = await forkOnPty<{ port: number }>(script, (agentPath) => [
      agentPath,
      dir,
      gatewayUrl,
      OPERATIONS.Authorization.path,
    ]);
    return new StartFloor(sim, `http://127.0.0.1:${ready.port}/start`, child, pty);
  }

  async stop(): Promise<void> {
    await stopForkedChild(this.child);
    await this.sim.close();
    await this.pty.close();
  }
}
