/** Running build tools: argument arrays (never a shell string), a deadline, and an error that names the command. */
import { spawn } from 'node:child_process';

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Keep stdout (default: only the tail of stderr/stdout for the error message). */
  capture?: boolean;
}

const TAIL_BYTES = 8192;

export async function run(cmd: string, args: string[], options: RunOptions = {}): Promise<string> {
  const timeoutMs = options.timeoutMs ?? 600_000;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let tail = '';
    const keepTail = (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      if (options.capture) out.push(chunk);
      else keepTail(chunk);
    });
    child.stderr.on('data', keepTail);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${cmd}: could not start (${err.message}); is it installed?`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else {
        const why = signal === 'SIGKILL' ? `killed after ${timeoutMs} ms` : `exit ${String(code ?? signal)}`;
        reject(
          new Error(`${cmd} ${args.join(' ')} failed (${why}) in ${options.cwd ?? process.cwd()}:\n${tail.trim()}`),
        );
      }
    });
  });
}

/** Seconds since `start` (monotonic), for the build's timing lines. */
export function secondsSince(start: bigint): string {
  return (Number(process.hrtime.bigint() - start) / 1e9).toFixed(1);
}
