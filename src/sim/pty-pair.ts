/**
 * A socat pseudo-terminal pair for end-to-end tests, the chaos run and the benchmarks: the agent opens `agentPath` as its serial
 * port, the VMC simulator opens `vmcPath`. Link names are stable for the life of the pair, so
 * unplug() (socat exits, both ptys vanish) and replug() (a new pair under the same names) look to
 * the agent exactly like a USB adapter pulled out and plugged back in.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PtyPair {
  agentPath: string;
  vmcPath: string;
  unplug(): Promise<void>;
  replug(): Promise<void>;
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 5000;

export async function createPtyPair(): Promise<PtyPair> {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-pty-'));
  const agentPath = join(dir, 'agent');
  const vmcPath = join(dir, 'vmc');
  let child: ChildProcess | null = null;

  const start = async (): Promise<void> => {
    const proc = spawn('socat', [`pty,raw,echo=0,link=${agentPath}`, `pty,raw,echo=0,link=${vmcPath}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const spawnError = new Promise<Error>((resolve) => proc.once('error', resolve));
    child = proc;
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(existsSync(agentPath) && existsSync(vmcPath))) {
      const failed = await Promise.race([spawnError, new Promise<null>((r) => setTimeout(() => r(null), 10))]);
      if (failed) throw new Error(`socat could not start (${failed.message}); install socat (apt-get install socat)`);
      if (proc.exitCode !== null) throw new Error(`socat exited with ${proc.exitCode}: ${stderr.trim()}`);
      if (Date.now() > deadline) throw new Error(`socat did not create ${agentPath} and ${vmcPath} within ${START_TIMEOUT_MS} ms: ${stderr.trim()}`);
    }
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    child = null;
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(timer);
    }
    // socat removes its links on a clean exit; make sure, so a replug cannot find stale ones.
    rmSync(agentPath, { force: true });
    rmSync(vmcPath, { force: true });
  };

  await start();
  return {
    agentPath,
    vmcPath,
    unplug: stop,
    replug: async () => {
      await stop();
      await start();
    },
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
