/**
 * The technician's SSH into the guest, over one ControlMaster connection: a new connection costs
 * 4-5 s under emulation, a command over the master well under one. Commands are passed as one
 * argument to the guest's shell; callers quote with `q()`.
 */
import { join } from 'node:path';
import { run, waitFor, type RunResult } from './proc.js';

export interface Guest {
  /** Runs a shell command line in the guest as root. */
  sh(command: string, timeoutMs: number, allowFail?: boolean, input?: string): Promise<RunResult>;
  copyTo(localPath: string, remotePath: string, timeoutMs: number): Promise<void>;
  /** Waits until sshd answers (a new master each try), up to the deadline. */
  waitUp(timeoutMs: number): Promise<void>;
  /** Closes the master connection (after a power cut it is dead anyway). */
  close(): Promise<void>;
}

/** Single-quotes one shell word. */
export function q(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export function guestSsh(opts: { port: number; key: string; runDir: string }): Guest {
  const control = join(opts.runDir, 'ssh-master');
  const common = [
    '-i',
    opts.key,
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'LogLevel=ERROR',
    '-o',
    'BatchMode=yes',
    '-o',
    'ConnectTimeout=15',
    '-o',
    'ServerAliveInterval=5',
    '-o',
    'ServerAliveCountMax=24', // a guest starved of CPU may not answer for a minute
    '-o',
    `ControlPath=${control}`,
  ];
  const target = 'root@127.0.0.1';
  const guest: Guest = {
    async sh(command, timeoutMs, allowFail = false, input) {
      return run('ssh', [...common, '-o', 'ControlMaster=no', '-p', String(opts.port), target, command], {
        timeoutMs,
        allowFail,
        what: `guest: ${command.slice(0, 120)}`,
        ...(input !== undefined ? { input } : {}),
      });
    },
    async copyTo(localPath, remotePath, timeoutMs) {
      await run(
        'scp',
        [...common, '-o', 'ControlMaster=no', '-P', String(opts.port), localPath, `${target}:${remotePath}`],
        { timeoutMs, what: `scp ${localPath}` },
      );
    },
    async waitUp(timeoutMs) {
      await guest.close();
      await waitFor(
        'sshd in the guest',
        timeoutMs,
        async () => {
          // -f -N -M: a background master that later commands reuse.
          await run(
            'ssh',
            [
              ...common,
              '-o',
              'ControlMaster=yes',
              '-o',
              'ControlPersist=600',
              '-f',
              '-N',
              '-p',
              String(opts.port),
              target,
            ],
            { timeoutMs: 30_000, what: 'ssh master' },
          );
          const r = await guest.sh('true', 15_000);
          return r.code === 0 ? true : undefined;
        },
        2000,
      );
    },
    async close() {
      await run('ssh', [...common, '-O', 'exit', '-p', String(opts.port), target], {
        timeoutMs: 10_000,
        allowFail: true,
      });
    },
  };
  return guest;
}
