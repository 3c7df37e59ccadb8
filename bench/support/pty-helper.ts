/**
 * A helper process the bench forks onto a fresh pty pair with the VMC simulator on the other end
 * (the vend floor's pty-echo, the Start floor): forked, its first IPC message awaited (what it
 * says it is ready with), and the simulator's reader enabled by it. Everything is torn down if
 * any step fails.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPtyPair, type PtyPair } from '../../test/support/pty.js';
import type { VmcSimulator } from '../../src/sim/vmc/index.js';
import { waitFor } from './budget.js';
import { attachVmc } from './vmc.js';

export interface PtyHelper<Ready> {
  sim: VmcSimulator;
  child: ChildProcess;
  pty: PtyPair;
  /** The helper's first IPC message. */
  ready: Ready;
}

export async function forkOnPty<Ready>(
  script: URL,
  args: (agentPath: string) => string[],
  attach: (vmcPath: string) => Promise<VmcSimulator> = attachVmc,
): Promise<PtyHelper<Ready>> {
  const name = basename(fileURLToPath(script));
  const pty = await createPtyPair();
  let sim: VmcSimulator | null = null;
  let child: ChildProcess | null = null;
  try {
    sim = await attach(pty.vmcPath);
    child = fork(fileURLToPath(script), args(pty.agentPath), { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const c = child;
    const ready = await new Promise<Ready>((resolve, reject) => {
      c.once('message', (m: Ready) => resolve(m));
      c.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
    });
    c.removeAllListeners('exit');
    const s = sim;
    if (!(await waitFor(() => s.state().reader === 'enabled', 5000)))
      throw new Error(`the VMC simulator's reader was not enabled by ${name}`);
    return { sim: s, child: c, pty, ready };
  } catch (err) {
    child?.kill('SIGTERM');
    await sim?.close();
    await pty.close();
    throw err;
  }
}
