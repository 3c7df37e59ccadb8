/**
 * A pseudo-terminal pair for the VMC simulator, end-to-end tests, the chaos run and the
 * benchmarks: the agent opens `agentPath` as its serial port, the VMC simulator opens `vmcPath`.
 * The pair is the project's own relay (native/pty-relay.c, built by `npm ci`): two pty masters
 * joined back to back in a child process, both lines raw. Link names are stable for the life of
 * the pair, so unplug() (the relay exits, both ptys vanish) and replug() (a new pair under the
 * same names) look to the agent exactly like a USB adapter pulled out and plugged back in.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCodes, QrvendError } from '../core/errors.js';

export interface PtyPair {
  agentPath: string;
  vmcPath: string;
  unplug(): Promise<void>;
  replug(): Promise<void>;
  close(): Promise<void>;
}

/** The relay program, compiled next to the built sources (dist/src/native). */
export const PTY_RELAY = fileURLToPath(new URL('../native/qrvend-pty', import.meta.url));

const START_TIMEOUT_MS = 5000;
const STOP_TIMEOUT_MS = 2000;

/** A running relay: `stop()` ends it and waits until both links are gone. */
export interface PtyRelay {
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts the relay with its two ends linked at `linkA` and `linkB` (any stale file there is
 * replaced). Resolves once both links exist; rejects with a clear error otherwise, leaving no
 * process behind.
 */
export async function startPtyRelay(linkA: string, linkB: string): Promise<PtyRelay> {
  if (!existsSync(PTY_RELAY)) {
    throw new QrvendError(ErrorCodes.SERIAL_OPEN_FAILED, `the pty relay ${PTY_RELAY} is not built`, { hint: 'run `npm ci` or `npm run build` (needs a C compiler)' });
  }
  // stdin stays a pipe: the relay ends when it closes (this process gone), and with its parent.
  const proc = spawn(PTY_RELAY, [linkA, linkB], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    proc.stdin?.destroy();
    // The relay removes its links on the way out; make sure, so a replug cannot find stale ones.
    rmSync(linkA, { force: true });
    rmSync(linkB, { force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      const done = (err?: Error) => {
        clearTimeout(timer);
        proc.stdout!.removeAllListeners('data');
        if (err) reject(err);
        else resolve();
      };
      let out = '';
      proc.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('ready\n')) done();
      });
      proc.once('error', (err) => done(err));
      proc.once('exit', (code, signal) => done(new Error(`exited with ${code ?? signal}`)));
    });
  } catch (err) {
    await stop();
    throw new QrvendError(ErrorCodes.SERIAL_OPEN_FAILED, `cannot make a pty pair at ${linkA} and ${linkB}: ${(err as Error).message}${stderr ? `: ${stderr.trim()}` : ''}`);
  }
  proc.stdout!.resume();
  return { process: proc, stop };
}

/** Directories of pairs not closed yet: removed if this process exits first (the relays die with it). */
const liveDirs = new Set<string>();
process.once('exit', () => {
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
});

export async function createPtyPair(): Promise<PtyPair> {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-pty-'));
  liveDirs.add(dir);
  const agentPath = join(dir, 'agent');
  const vmcPath = join(dir, 'vmc');
  let relay: PtyRelay | null = null;

  const unplug = async (): Promise<void> => {
    const r = relay;
    relay = null;
    await r?.stop();
  };
  const plug = async (): Promise<void> => {
    relay = await startPtyRelay(agentPath, vmcPath);
  };

  try {
    await plug();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
    throw err;
  }
  return {
    agentPath,
    vmcPath,
    unplug,
    replug: async () => {
      await unplug();
      await plug();
    },
    close: async () => {
      await unplug();
      rmSync(dir, { recursive: true, force: true });
      liveDirs.delete(dir);
    },
  };
}
