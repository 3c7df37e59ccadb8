/**
 * Debian's mosquitto (2.x) for `npm run fleet-test` and `npm run fleet-sim`: started on a free
 * loopback port with a configuration written to a private temporary directory, MQTT 3.1.1 and 5.
 * `npm test` never loads this file (rigs/broker/index.ts imports it only when
 * QRVEND_TEST_BROKER=mosquitto).
 *
 * - listener 127.0.0.1 only; anonymous clients unless `users` is given, then a password file
 *   (PBKDF2-SHA512 hashes, the format mosquitto_passwd writes) and, when given, an ACL file;
 * - persistence off unless asked (then retained messages and sessions survive stop()/start());
 * - stop() ends the process (a broker outage), start() starts it again on the same port;
 *   close() also removes the directory. A test that fails half-way leaves nothing behind: the
 *   process and the directory are registered with process-end.
 * - Everything is passed as argv and files, never through a shell; values that go into the
 *   configuration file are checked to hold no line breaks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { atProcessEnd } from '../../src/sim/process-end.js';
import { registerMosquitto } from './index.js';
import type { TestBroker } from './types.js';

export const MOSQUITTO_BIN_DEFAULT = '/usr/sbin/mosquitto';

export interface MosquittoUser {
  username: string;
  password: string;
}

export interface MosquittoOptions {
  /** Listen on this port (default: a free one, picked once and kept across stop()/start()). */
  port?: number;
  /** When given, anonymous clients are refused and these are the only accounts. */
  users?: readonly MosquittoUser[];
  /** ACL file text (mosquitto's acl_file syntax); only with `users`. */
  acl?: string;
  /** Keep retained messages and persistent sessions across stop()/start(). Default false. */
  persistence?: boolean;
  /** The executable (default QRVEND_MOSQUITTO_BIN, else /usr/sbin/mosquitto). */
  bin?: string;
  /** Raise the broker's open-file limit (one descriptor per client) through prlimit; for the fleet simulation. */
  maxOpenFiles?: number;
  /** How long to wait for the listener. Default 10 s. */
  readyTimeoutMs?: number;
  /** Files to write into the private directory first (certificates for a TLS listener), by bare name. */
  files?: Record<string, string | Buffer>;
  /**
   * The whole configuration instead of the generated one (a test of a documented site config):
   * given the port and the private directory, it must listen on 127.0.0.1 only.
   */
  config?: (context: { port: number; dir: string; user: string }) => string;
}

export interface MosquittoBroker extends TestBroker {
  readonly kind: 'mosquitto';
  /** The running broker's process id (null while stopped): for CPU and memory figures from /proc. */
  readonly pid: number | null;
  /** The private directory of its configuration (removed by close()). */
  readonly configDir: string;
  /** The last lines mosquitto wrote to its log (stderr), for error messages. */
  logTail(): string;
}

const SAFE_NAME = /^[A-Za-z0-9._:@-]{1,128}$/;

/** A password-file line as mosquitto_passwd writes it (`$7$`: PBKDF2-SHA512, 101 iterations). */
export function mosquittoPasswordLine(user: MosquittoUser): string {
  if (!SAFE_NAME.test(user.username))
    throw new Error(`mosquitto user name must match ${SAFE_NAME}, got ${JSON.stringify(user.username)}`);
  if (user.password.length === 0 || /[\r\n\0]/.test(user.password))
    throw new Error(`mosquitto password for ${user.username} must be one non-empty line`);
  const salt = randomBytes(12);
  const iterations = 101;
  const hash = pbkdf2Sync(Buffer.from(user.password, 'utf8'), salt, iterations, 64, 'sha512');
  return `${user.username}:$7$${iterations}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no free loopback port');
  return address.port;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function configText(options: {
  port: number;
  dir: string;
  users: boolean;
  acl: boolean;
  persistence: boolean;
}): string {
  for (const value of [options.dir]) {
    if (/[\r\n\0]/.test(value)) throw new Error(`mosquitto: path holds a line break: ${JSON.stringify(value)}`);
  }
  const lines = [
    '# written by qrvend (rigs/broker/mosquitto-broker.ts) for a test or simulation',
    'per_listener_settings false',
    `listener ${options.port} 127.0.0.1`,
    `allow_anonymous ${options.users ? 'false' : 'true'}`,
    'log_dest stderr',
    'log_type error',
    'log_type warning',
    'log_type notice',
    'connection_messages false',
    // Started as root, mosquitto 2 drops to the `mosquitto` user, which cannot read this private
    // directory; it stays the user that started it.
    `user ${userInfo().username}`,
    'max_queued_messages 100000',
    // Without it a command's reply waits on Nagle and delayed ACKs: 44 ms instead of 1.3 ms per round trip (fleet-sim).
    'set_tcp_nodelay true',
  ];
  if (options.users) lines.push(`password_file ${join(options.dir, 'passwd')}`);
  if (options.acl) lines.push(`acl_file ${join(options.dir, 'acl')}`);
  if (options.persistence) {
    lines.push('persistence true', `persistence_location ${options.dir}/`, 'autosave_interval 1');
  } else {
    lines.push('persistence false');
  }
  return `${lines.join('\n')}\n`;
}

export async function startMosquitto(options: MosquittoOptions = {}): Promise<MosquittoBroker> {
  const bin = options.bin ?? process.env.QRVEND_MOSQUITTO_BIN ?? MOSQUITTO_BIN_DEFAULT;
  if (!existsSync(bin)) {
    throw new Error(
      `mosquitto not found at ${bin}: install the Debian package \`mosquitto\` ` +
        `(apt-get install mosquitto), or set QRVEND_MOSQUITTO_BIN to its path`,
    );
  }
  if (options.acl !== undefined && options.users === undefined)
    throw new Error('mosquitto: an ACL needs users (a password file)');
  const port = options.port ?? (await freeLoopbackPort());
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-mosquitto-'));
  let child: ChildProcess | null = null;
  let log: string[] = [];
  const forget = atProcessEnd(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  try {
    if (options.users)
      writeFileSync(join(dir, 'passwd'), `${options.users.map(mosquittoPasswordLine).join('\n')}\n`, { mode: 0o600 });
    if (options.acl !== undefined) writeFileSync(join(dir, 'acl'), options.acl, { mode: 0o600 });
    for (const [name, content] of Object.entries(options.files ?? {})) {
      if (!/^[A-Za-z0-9._-]{1,64}$/.test(name) || name.startsWith('.'))
        throw new Error(`mosquitto: bad file name ${JSON.stringify(name)}`);
      writeFileSync(join(dir, name), content, { mode: 0o600 });
    }
  } catch (err) {
    forget();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  async function start(): Promise<void> {
    if (child) return;
    const text = options.config
      ? options.config({ port, dir, user: userInfo().username })
      : configText({
          port,
          dir,
          users: options.users !== undefined,
          acl: options.acl !== undefined,
          persistence: options.persistence === true,
        });
    if (
      !new RegExp(`^listener ${port} 127\\.0\\.0\\.1$`, 'm').test(text) ||
      (text.match(/^\s*listener\s/gm) ?? []).length !== 1
    )
      throw new Error(`mosquitto: the configuration must listen on 127.0.0.1:${port} only`);
    writeFileSync(join(dir, 'mosquitto.conf'), text, { mode: 0o600 });
    const args = ['-c', join(dir, 'mosquitto.conf')];
    const [file, argv] =
      options.maxOpenFiles !== undefined
        ? ['prlimit', [`--nofile=${Math.trunc(options.maxOpenFiles)}`, '--', bin, ...args]]
        : [bin, args];
    log = [];
    const proc = spawn(file, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    let exited: string | null = null;
    proc.stderr!.setEncoding('utf8');
    proc.stderr!.on('data', (chunk: string) => {
      log.push(...chunk.split('\n').filter((l) => l.length > 0));
      if (log.length > 40) log = log.slice(-40);
    });
    proc.once('error', (err) => {
      exited = err.message;
    });
    proc.once('exit', (code, signal) => {
      exited = `exited with ${signal ?? code}`;
      if (child === proc) child = null;
    });
    const deadline = performance.now() + (options.readyTimeoutMs ?? 10_000);
    for (;;) {
      if (exited !== null)
        throw new Error(`mosquitto did not start (${exited}): ${log.slice(-5).join(' | ') || 'no output'}`);
      if (await canConnect(port)) return;
      if (performance.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(
          `mosquitto did not listen on 127.0.0.1:${port} within ` +
            `${options.readyTimeoutMs ?? 10_000} ms: ${log.slice(-5).join(' | ')}`,
        );
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async function stop(): Promise<void> {
    const proc = child;
    if (!proc) return;
    const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(timer);
    child = null;
    // The port is free again only once nothing answers on it (bounded: someone else may have taken it).
    const deadline = performance.now() + 5_000;
    while ((await canConnect(port)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  }

  async function close(): Promise<void> {
    await stop();
    rmSync(dir, { recursive: true, force: true });
    forget();
  }

  try {
    await start();
  } catch (err) {
    await close();
    throw err;
  }

  return {
    kind: 'mosquitto',
    protocolVersions: [3, 4, 5],
    get port() {
      return port;
    },
    get url() {
      return `mqtt://127.0.0.1:${port}`;
    },
    get pid() {
      return child?.pid ?? null;
    },
    configDir: dir,
    logTail: () => log.join('\n'),
    start,
    stop,
    close,
  };
}

registerMosquitto((options) => startMosquitto(options));
