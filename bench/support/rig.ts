/**
 * One end-to-end setup: scratch directory on disk, pty pair, VMC simulator on the VMC end,
 * configuration, optional ledger seeding, and the daemon spawned on the agent end. Started, it has
 * seen the daemon enable the reader (`C,1`), and knows how long that took from spawn.
 */
import type { VmcSimulator } from '../../src/sim/vmc/index.js';
import { createPtyPair, type PtyPair } from '../../test/support/pty.js';
import { DaemonProcess, freePort, writeDaemonConfig, type DaemonFiles } from './daemon.js';
import { diskScratchDir } from './machine.js';
import { attachVmc, nextCommand } from './vmc.js';

export interface RigOptions {
  gatewayUrl: string;
  preauthAmount: number;
  /** Fills the ledger file before the daemon opens it. */
  seed?: (storePath: string) => void;
  /** How long the daemon may take to enable the reader. */
  enableTimeoutMs?: number;
}

export class DaemonRig {
  private constructor(
    readonly daemon: DaemonProcess,
    readonly sim: VmcSimulator,
    readonly files: DaemonFiles,
    /** Spawn until `C,1` was read on the VMC end, ms. */
    readonly coldStartMs: number,
    private readonly pty: PtyPair,
    private readonly removeScratch: () => void,
  ) {}

  static async start(o: RigOptions): Promise<DaemonRig> {
    const scratch = diskScratchDir('daemon');
    let pty: PtyPair | null = null;
    let sim: VmcSimulator | null = null;
    let daemon: DaemonProcess | null = null;
    try {
      pty = await createPtyPair();
      sim = await attachVmc(pty.vmcPath);
      const storePath = `${scratch.dir}/ledger.sqlite`;
      const files = writeDaemonConfig({ dir: scratch.dir, gatewayUrl: o.gatewayUrl, serialPath: pty.agentPath, storePath, preauthAmount: o.preauthAmount, startPort: await freePort() });
      o.seed?.(storePath);
      const enabled = nextCommand(sim, (c) => c.kind === 'enable' && c.enabled, o.enableTimeoutMs ?? 30_000, 'C,1');
      enabled.catch(() => {});
      daemon = DaemonProcess.spawn(files.configPath);
      const exited = new Promise<never>((_, reject) => daemon!.child.once('exit', (code) => reject(new Error(`the daemon exited (${code}) before enabling the reader: ${daemon!.describeProblems()}`))));
      exited.catch(() => {});
      const { atMs } = await Promise.race([enabled, exited]);
      return new DaemonRig(daemon, sim, files, atMs - daemon.spawnedAt, pty, scratch.remove);
    } catch (err) {
      await daemon?.stop();
      await sim?.close();
      await pty?.close();
      scratch.remove();
      throw err;
    }
  }

  async stop(): Promise<void> {
    await this.daemon.stop();
    await this.sim.close();
    await this.pty.close();
    this.removeScratch();
  }
}
