/**
 * A PostgreSQL server of the test's own: initdb and pg_ctl from Debian's package
 * (/usr/lib/postgresql/<version>/bin) in a temporary directory, listening on a free loopback port
 * (and a socket in that directory), trust authentication for loopback only. PostgreSQL refuses
 * to run as root: as root it runs as the `postgres` user (runuser). Everything is argv, never a
 * shell; the settings go into postgresql.conf.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { CHILD_DEADLINE_MS } from '../../support/deadlines.js';

export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:PORT (no database: add /NAME). */
  server: string;
  stop(): void;
  restart(): void;
  /** Stops the server (fast shutdown: open transactions roll back, clients are cut) and keeps its data. */
  halt(): void;
  /** Starts a halted server again on the same port and data. */
  resume(): void;
}

export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : join(root, versions[0], 'bin');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (bin === null) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
  const asRoot = userInfo().uid === 0;
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-console-pg-'));
  const data = join(dir, 'data');
  const run = (tool: string, args: string[]) => {
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args;
    execFileSync(asRoot ? 'runuser' : join(bin, tool), argv, {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: CHILD_DEADLINE_MS,
    });
  };
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync']);
  appendFileSync(
    data + '/postgresql.conf',
    `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nfsync = off\n`,
  );
  const start = () => run('pg_ctl', ['-D', data, '-w', '-t', '60', '-l', join(dir, 'log'), 'start']);
  const stop = () => run('pg_ctl', ['-D', data, '-w', '-m', 'fast', 'stop']);
  start();
  return {
    server: `postgres://postgres@127.0.0.1:${port}`,
    restart: () => {
      stop();
      start();
    },
    halt: stop,
    resume: start,
    stop: () => {
      try {
        stop();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
