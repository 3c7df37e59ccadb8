/**
 * Stopping a helper process the bench forked (the gateway simulator, the broker): asked over IPC
 * with {type:'stop'} so it closes what it serves, killed if it has not exited 5 s later.
 */
import type { ChildProcess } from 'node:child_process';

export async function stopForkedChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.send({ type: 'stop' });
  const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(kill);
}
