/**
 * Real parts for the doctor's end-to-end tests: the built CLI as a child process, a pty pair (the
 * project's relay, src/sim/pty-pair.ts) with a fake adapter board answering `V` on the far end,
 * and temp directories.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SerialPort } from 'serialport';
import { startPtyRelay } from '../../src/pty/relay.js';

export const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `qrvend` asynchronously, so this process can keep playing the board meanwhile. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, QRVEND_CONFIG: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function tempDir(prefix: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface PtyPair {
  /** The end the agent (here: the doctor) opens as mdb.port. */
  agentPath: string;
  /** The end the fake board sits on. */
  boardPath: string;
  close(): Promise<void>;
}

export async function ptyPair(dir: string): Promise<PtyPair> {
  const agentPath = join(dir, 'tty-agent');
  const boardPath = join(dir, 'tty-board');
  const relay = await startPtyRelay(agentPath, boardPath);
  return { agentPath, boardPath, close: relay.stop };
}

/** A fake adapter board: answers every `V` line with a version line, ignores everything else. */
export async function fakeBoard(path: string, firmware: string, boardId: string): Promise<{ close(): Promise<void> }> {
  const port = new SerialPort({ path, baudRate: 115200, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  let buffered = '';
  port.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('latin1');
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).replace(/\r$/, '');
      buffered = buffered.slice(nl + 1);
      if (line === 'V') port.write(`v,${firmware},${boardId}\r\n`);
    }
  });
  return { close: () => new Promise<void>((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve())) };
}

/** Holds a serial device open (and locked) the way the running daemon does. */
export async function holdPort(path: string): Promise<{ close(): Promise<void> }> {
  const port = new SerialPort({ path, baudRate: 115200, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  return { close: () => new Promise<void>((resolve) => port.close(() => resolve())) };
}

/**
 * Teardown for a test that starts several parts: `defer(fn)` right after each part starts; when
 * the test ends (passed, failed or timed out) they run last-in, first-out, every one of them even
 * if one throws. (t.after alone runs hooks in the order they were added.)
 */
export function teardown(t: { after(fn: () => unknown): void }): (fn: () => unknown) => void {
  const steps: Array<() => unknown> = [];
  t.after(async () => {
    const errors: unknown[] = [];
    for (const step of steps.reverse()) {
      try {
        await step();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw errors[0];
  });
  return (fn) => void steps.push(fn);
}
