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
  /** Configuration changes (e.g. mdb.alwaysIdle, display.framebuffer). */
  patch?: (config: Record<string, Record<string, unknown>>, scratchDir: string) => void;
  /** Environment added to the daemon's (e.g. the fail-io shim in counting mode). */
  extraEnv?: (scratchDir: string) => NodeJS.ProcessEnv;
  /** A cgroup.procs file the daemon is started in (CPU budget). */
  cgroupProcs?: string;
  /** Log messages to count from the daemon's first line on (DaemonProcess.watch), e.g. "fleet link connected". */
  watchLogs?: string[];
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
    /** The daemon's scratch directory (ledger, configuration). */
    readonly dir: string,
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
      const patch =
        o.patch === undefined ? undefined : (c: Record<string, Record<string, unknown>>) => o.patch!(c, scratch.dir);
      const files = writeDaemonConfig({
        dir: scratch.dir,
        gatewayUrl: o.gatewayUrl,
        serialPath: pty.agentPath,
        storePath,
        preauthAmount: o.preauthAmount,
        startPort: await freePort(),
        ...(patch ? { patch } : {}),
      });
      o.seed?.(storePath);
      const enabled = nextCommand(sim, (c) => c.kind === 'enable' && c.enabled, o.enableTimeoutMs ?? 30_000, 'C,1');
      enabled.catch(() => {});
      daemon = DaemonProcess.spawn(files.configPath, {
        ...(o.extraEnv ? { extraEnv: o.extraEnv(scratch.dir) } : {}),
        ...(o.cgroupProcs !== undefined ? { cgroupProcs: o.cgroupProcs } : {}),
      });
      // Before any of its output is read (that happens on a later turn).
      for (const msg of o.watchLogs ?? []) daemon.watch(msg);
      const exited = new Promise<never>((_, reject) =>
        daemon!.child.once('exit', (code) =>
          reject(new Error(`the daemon exited (${code}) before enabling the reader: ${daemon!.describeProblems()}`)),
        ),
      );
      exited.catch(() => {});
      const { atMs } = await Promise.race([enabled, exited]);
      return new DaemonRig(daemon, sim, files, atMs - daemon.spawnedAt, pty, scratch.remove, scratch.dir);
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
