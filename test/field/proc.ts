/**
 * Host processes with a deadline each: every command the field test runs either finishes in its
 * time or is killed (its whole process group) and reported with what it printed.
 */
import { spawn } from 'node:child_process';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  timeoutMs: number;
  input?: string;
  /** Do not throw on a non-zero exit: the caller looks at `code`. */
  allowFail?: boolean;
  env?: NodeJS.ProcessEnv;
  /** What this is, for the error message. */
  what?: string;
}

const KEEP = 64 * 1024; // bound what is kept of a chatty command

export function run(cmd: string, args: readonly string[], o: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: o.env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout = (stdout + d).slice(-KEEP)));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-KEEP)));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, o.timeoutMs);
    child.once(
      'error',
      (err) => (clearTimeout(timer), reject(new Error(`${o.what ?? cmd}: cannot start ${cmd}: ${err.message}`))),
    );
    child.once('close', (code) => {
      clearTimeout(timer);
      const what = o.what ?? `${cmd} ${args.join(' ')}`.slice(0, 200);
      if (timedOut)
        return reject(
          new Error(`${what}: no result within ${o.timeoutMs} ms (killed)\n${tail(stdout)}\n${tail(stderr)}`),
        );
      if (code !== 0 && !o.allowFail)
        return reject(new Error(`${what}: exit ${code}\n${tail(stdout)}\n${tail(stderr)}`));
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(o.input ?? '');
  });
}

function tail(text: string): string {
  return text.split('\n').slice(-25).join('\n');
}

/** Polls `check` until it returns a value (not undefined), or throws naming `what`. */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | undefined> | T | undefined,
  everyMs = 500,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let lastError = '';
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = (err as Error).message.split('\n')[0] ?? '';
    }
    if (performance.now() > deadline)
      throw new Error(
        `timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}` +
          (lastError ? ` (last error: ${lastError})` : ''),
      );
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Seconds since `t0` (performance.now()), one decimal. */
export function secondsSince(t0: number): number {
  return Math.round((performance.now() - t0) / 100) / 10;
}
