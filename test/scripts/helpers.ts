/** Running the repository's shell scripts from tests: paths, and a promise around execFile. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The checkout root (dist/test/scripts -> ../../..). */
export const REPO = fileURLToPath(new URL('../../../', import.meta.url));

export interface ScriptRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runScript(
  file: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ScriptRun> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { env: { ...process.env, ...options.env }, timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code =
          err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
