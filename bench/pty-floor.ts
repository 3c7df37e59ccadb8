/**
 * The floor of the vend figures: the same vend over the same kind of pty against pty-echo (a
 * reader that approves at once, in its own process, with the daemon's serialport binding and line
 * framing) instead of the daemon. Whatever the vend figures show above this floor is the daemon's;
 * the floor itself is the cost of the measurement path on this machine at that moment, which is
 * why it is measured in blocks alternating with the daemon's (vend-latency.ts), never once apart.
 */
import type { ChildProcess } from 'node:child_process';
import type { PtyPair } from '../test/support/pty.js';
import { forkOnPty } from './support/pty-helper.js';
import { attachVmc, nextCommand } from './support/vmc.js';
import type { VmcSimulator } from '../src/sim/vmc/index.js';

export class EchoFloor {
  private constructor(
    readonly sim: VmcSimulator,
    private readonly child: ChildProcess,
    private readonly pty: PtyPair,
  ) {}

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /**
   * pty-echo on a fresh pty pair, reader enabled and a session open with `funds`. `attach` makes
   * the VMC simulator on the pty's other end (a diagnostic compares ways of reading it).
   */
  static async start(
    funds = 1_000_000,
    attach: (vmcPath: string) => Promise<VmcSimulator> = attachVmc,
  ): Promise<EchoFloor> {
    const { sim, child, pty } = await forkOnPty(
      new URL('./support/pty-echo.js', import.meta.url),
      (agentPath) => [agentPath],
      attach,
    );
    try {
      const started = nextCommand(sim, (cmd) => cmd.kind === 'start', 5000, 'C,START');
      child.send({ type: 'start', funds });
      await started;
      return new EchoFloor(sim, child, pty);
    } catch (err) {
      child.kill('SIGTERM');
      await sim.close();
      await pty.close();
      throw err;
    }
  }

  async stop(): Promise<void> {
    this.child.kill('SIGTERM');
    await this.sim.close();
    await this.pty.close();
  }
}
