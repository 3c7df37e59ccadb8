/**
 * The project's pseudo-terminal pair: `qrvend-pty LINK_A LINK_B` (native/pty-relay.c, compiled by
 * `npm ci` into dist/src/native) opens two pty masters, sets both lines raw, links LINK_A and
 * LINK_B to their slaves and copies bytes between them until it is stopped, its stdin closes or
 * its parent dies. The simulators, the tests and the serial trace stand on it instead of socat.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ErrorCodes, QrvendError } from '../core/errors.js';

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
    throw new QrvendError(ErrorCodes.SERIAL_OPEN_FAILED, `the pty relay ${PTY_RELAY} is not built`, {
      hint: 'run `npm ci` or `npm run build` (needs a C compiler)',
    });
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
    throw new QrvendError(
      ErrorCodes.SERIAL_OPEN_FAILED,
      `cannot make a pty pair at ${linkA} and ${linkB}: ${(err as Error).message}${stderr ? `: ${stderr.trim()}` : ''}`,
    );
  }
  proc.stdout!.resume();
  return { process: proc, stop };
}
