/** Runs the real `qrvend` executable (dist/src/cli/main.js) for the fleet CLI tests. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const QRVEND = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs to completion (never blocks this event loop: an in-process broker keeps serving). */
export function runCli(args: string[], timeoutMs = 30_000, extraEnv: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    // The operator's own QRVEND_FLEET_* settings must not leak into a test.
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('QRVEND_FLEET_'))),
      ...extraEnv,
    };
    execFile(
      process.execPath,
      [QRVEND, ...args],
      { encoding: 'utf8', timeout: timeoutMs, env },
      (err, stdout, stderr) => {
        const code =
          err === null
            ? 0
            : typeof (err as { code?: unknown }).code === 'number'
              ? (err as { code: number }).code
              : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Starts the CLI and returns the process, with its output collected as it comes. */
export function startCli(args: string[]): {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
} {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('QRVEND_FLEET_')));
  const child = spawn(process.execPath, [QRVEND, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exited };
}
