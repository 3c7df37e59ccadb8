/**
 * Files and configuration under hostile conditions (docs/decisions/hardening.md items 8-12): modes whatever the
 * umask, secrets readable by others, relative paths, a truncated ledger, a device path that a
 * tool would read as a command. Through the real daemon and CLI, in scratch directories.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, createServer, type AddressInfo } from 'node:net';
import { createRig, until } from '../../rigs/rig.js';
import { openSession } from '../e2e/support/static-session.js';
import { runCli, scratchDir } from './support.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8).padStart(3, '0');

/** A site config for the CLI: sim serial port, everything in `dir`. */
function site(dir: string, overrides: Record<string, unknown> = {}): { config: string; token: string } {
  const token = join(dir, 'secret-token');
  writeFileSync(token, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  const config = join(dir, 'config.json');
  const base = {
    gateway: { baseUrl: 'http://127.0.0.1:9' },
    start: { listen: '127.0.0.1:0', secretTokenFile: token },
    mdb: { port: 'sim' },
    store: { path: join(dir, 'state', 'ledger.sqlite') },
    gpio: { mode: 'off' },
    ...overrides,
  };
  writeFileSync(config, JSON.stringify(base), { mode: 0o640 });
  return { config, token };
}

test(
  '8. under umask 022 the state directory is created 0750 and the ledger, its -wal, -shm and identity 0600',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const scratch = scratchDir('qrvend-umask-');
    const previous = process.umask(0o022); // the daemon inherits it, as when started by hand
    const state = join(scratch.dir, 'state');
    let rig: Awaited<ReturnType<typeof createRig>> | null = null;
    try {
      rig = await createRig({ config: { store: { path: join(state, 'ledger.sqlite') } } });
      await rig.startAgent();
      await openSession(rig); // a write: the -wal and -shm exist
      assert.equal(mode(state), '750');
      for (const file of ['ledger.sqlite', 'ledger.sqlite-wal', 'ledger.sqlite-shm', 'ledger.sqlite.identity']) {
        assert.ok(existsSync(join(state, file)), `${file} exists`);
        assert.equal(mode(join(state, file)), '600', file);
      }
    } finally {
      process.umask(previous);
      await rig?.close();
      scratch.cleanup();
    }
  },
);

test(
  '9. a secret or TLS key readable by others is refused (exit 78, file ' +
    'and mode named); a config writable by others is warned about',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const scratch = scratchDir('qrvend-modes-');
    try {
      const { config, token } = site(scratch.dir);
      assert.equal((await runCli(['config', 'check', config])).code, 0);

      chmodSync(token, 0o644);
      for (const args of [
        ['config', 'check', config],
        ['run', '--config', config],
      ]) {
        const r = await runCli(args);
        assert.equal(r.code, 78, `${args[0]}: ${r.stderr}`);
        assert.match(r.stdout + r.stderr, new RegExp(`${token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has mode 0644`));
      }
      const doctor = JSON.parse((await runCli(['doctor', '--json', '--config', config])).stdout) as {
        results: Array<{ id: string; status: string }>;
      };
      assert.equal(doctor.results.find((r) => r.id === 'secret-token')?.status, 'FAIL');
      chmodSync(token, 0o600);

      const key = join(scratch.dir, 'tls.key');
      writeFileSync(key, 'not really a key', { mode: 0o644 });
      chmodSync(key, 0o644);
      const withKey = site(scratch.dir, {
        start: { listen: '127.0.0.1:0', secretTokenFile: token, certFile: join(scratch.dir, 'tls.crt'), keyFile: key },
      });
      const keyRun = await runCli(['config', 'check', withKey.config]);
      assert.equal(keyRun.code, 78);
      assert.match(keyRun.stderr, /TLS key .*tls\.key has mode 0644/);

      const plain = site(scratch.dir);
      chmodSync(plain.config, 0o666);
      const warned = await runCli(['config', 'check', plain.config]);
      assert.equal(warned.code, 0, 'a config writable by others is a warning, not a refusal');
      assert.match(warned.stderr, /warning: configuration file .* has mode 0666: every local user can change it/);
    } finally {
      scratch.cleanup();
    }
  },
);

test(
  '10. a relative store.path (or any path key) is refused at start ' +
    'with exit 78 naming the key, from any working directory',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const scratch = scratchDir('qrvend-relpath-');
    try {
      for (const [key, overrides] of [
        ['store.path', { store: { path: 'state/ledger.sqlite' } }],
        ['display.png', { display: { png: 'screen.png' } }],
      ] as const) {
        const { config } = site(scratch.dir, overrides);
        for (const args of [
          ['config', 'check', config],
          ['run', '--config', config],
        ]) {
          const r = await runCli(args, { timeoutMs: 15_000 });
          assert.equal(r.code, 78, `${args[0]} with a relative ${key}: ${r.stderr}`);
          assert.match(r.stderr, new RegExp(`${key.replace('.', '\\.')}.*absolute path`));
        }
      }
    } finally {
      scratch.cleanup();
    }
  },
);

/** A loopback port free now (the daemon is given it, so a test can knock on it before it is told). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether a TCP connection to 127.0.0.1:`port` is refused (nothing listens). */
function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer from 127.0.0.1:${port} in 5 s`)));
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNREFUSED' ? resolve(true) : reject(err)));
  });
}

test(
  '11. a ledger truncated to zero bytes is noticed: LEDGER_CORRUPT, ' +
    'sessions refused until `qrvend ledger acknowledge-loss`',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const port = await freePort();
    const rig = await createRig({ config: { start: { listen: `127.0.0.1:${port}` } } });
    try {
      await rig.startAgent();
      assert.equal(rig.agent!.startOrigin, `http://127.0.0.1:${port}`);
      await openSession(rig);
      await rig.stopAgent('SIGKILL');
      const ledger = join(rig.dir, 'ledger.sqlite');
      truncateSync(ledger, 0);
      for (const suffix of ['-wal', '-shm']) if (existsSync(ledger + suffix)) truncateSync(ledger + suffix, 0);

      const agent = await rig.startAgentProcessOnly();
      const lostLines = () => agent.logs.filter((l) => l.code === 'LEDGER_CORRUPT' && /ledger lost/.test(l.msg));
      const lost = await agent.waitForLog(
        (l) => l.code === 'LEDGER_CORRUPT' && /ledger lost/.test(l.msg),
        20_000,
        'the ledger-lost alarm',
      );
      assert.match(String(lost.err), /empty \(truncated\)/);
      // Not only at the first alarm: through every retry of the open, nothing listens on the Start
      // port and the payment side never says it is ready.
      const ready = () => agent.logs.some((l) => l.msg === 'payment worker ready');
      for (let retry = 1; retry <= 3; retry++) {
        await until(() => lostLines().length >= retry || ready(), 20_000, `ledger-lost alarm number ${retry}`);
        assert.equal(ready(), false, `no Start endpoint while the loss is unacknowledged (alarm ${retry})`);
        assert.equal(await connectionRefused(port), true, `a Start connection is refused at alarm ${retry}`);
      }
      assert.equal(statSync(ledger).size, 0, 'the empty file was not silently turned into a fresh ledger');

      const ack = await runCli(['ledger', 'acknowledge-loss', '--config', rig.configFile]);
      assert.equal(ack.code, 0, ack.stderr);
      assert.match(ack.stdout, /ledger loss acknowledged/);
      await agent.waitForLog(
        (l) => l.msg === 'payment worker ready',
        30_000,
        'the daemon to start a new ledger after the acknowledgement',
      );
      assert.equal(await connectionRefused(port), false, 'the Start endpoint listens once the loss is acknowledged');
      assert.ok(
        readdirSync(rig.dir).some((f) => f.startsWith('ledger.sqlite.identity.lost-')),
        'the old marker is kept as a record',
      );
      const again = await runCli(['ledger', 'acknowledge-loss', '--config', rig.configFile]);
      assert.notEqual(again.code, 0, 'nothing to acknowledge on a healthy ledger');
    } finally {
      await rig.close();
    }
  },
);

test(
  '12. an mdb.port that a tool would read as a command (socat !!SYSTEM:) is refused at start, exit 78, nothing run',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const scratch = scratchDir('qrvend-port-');
    try {
      const marker = join(scratch.dir, 'owned');
      for (const port of [
        `/dev/ttyUSB0!!SYSTEM:touch ${marker}`,
        '/dev/tty$(touch x)',
        'relative/tty',
        '/dev/../etc/passwd',
        '/dev/tty USB0',
      ]) {
        const { config } = site(scratch.dir, { mdb: { port } });
        for (const args of [
          ['config', 'check', config],
          ['run', '--config', config],
        ]) {
          const r = await runCli(args, { timeoutMs: 15_000 });
          assert.equal(r.code, 78, `${args[0]} with mdb.port ${JSON.stringify(port)}`);
          assert.match(r.stderr, /mdb\.port/);
        }
      }
      assert.equal(existsSync(marker), false);
    } finally {
      scratch.cleanup();
    }
  },
);
