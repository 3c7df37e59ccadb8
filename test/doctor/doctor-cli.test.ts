/**
 * `qrvend doctor --json` end to end: the built CLI against a healthy setup (a fake board on a
 * pty pair, the gateway simulator on loopback, a real ledger file, a PNG display directory) and
 * against broken ones (no serial device, a closed loopback port, a garbage ledger, a busy port,
 * a bad config, a bad token file). The token's content must never appear in the output.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startGatewaySimulator } from '../../src/sim/gateway/index.js';
import { openLedger } from '../../src/ledger/index.js';
import type { DoctorReport, CheckResult } from '../../src/doctor/index.js';
import { runCli, tempDir, ptyPair, fakeBoard, holdPort, teardown, type CliRun } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const TOKEN = 'T0k3n'.repeat(12) + 'ABCD'; // 64 characters, distinctive enough to grep for

interface Setup {
  dir: string;
  configPath: string;
  tokenPath: string;
  ledgerPath: string;
}

function writeSetup(dir: string, site: { gateway: string; port: string; ledger?: 'fresh' | 'none' }): Setup {
  const tokenPath = join(dir, 'secret-token');
  writeFileSync(tokenPath, `${TOKEN}\n`);
  chmodSync(tokenPath, 0o640);
  const ledgerPath = join(dir, 'state', 'ledger.sqlite');
  if (site.ledger !== 'none') openLedger({ path: ledgerPath, decimalPlaces: 2 }).close();
  const config = {
    gateway: { baseUrl: site.gateway, connectTimeoutMs: 2000 },
    start: { secretTokenFile: tokenPath },
    machine: { uniQr: 'QRVEND-TEST-0001' },
    mdb: { port: site.port },
    store: { path: ledgerPath },
    display: { png: join(dir, 'screen.png') },
  };
  const configPath = join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  return { dir, configPath, tokenPath, ledgerPath };
}

function parse(run: CliRun): DoctorReport {
  assert.equal(run.stderr.includes(TOKEN), false, 'the secret token leaked on stderr');
  assert.equal(run.stdout.includes(TOKEN), false, 'the secret token leaked on stdout');
  try {
    return JSON.parse(run.stdout) as DoctorReport;
  } catch {
    assert.fail(`doctor --json did not print JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

function byId(report: DoctorReport): Record<string, CheckResult> {
  return Object.fromEntries(report.results.map((r) => [r.id, r]));
}

/** A loopback port with nothing listening: bind one, note it, close it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

test(
  'healthy setup: every check passes except the daemon state, exit code 0',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    // Each part is torn down even if a later one fails to start.
    const defer = teardown(t);
    const tmp = tempDir('qrvend-doctor-ok-');
    defer(tmp.cleanup);
    const gateway = await startGatewaySimulator();
    defer(() => gateway.close());
    const pty = await ptyPair(tmp.dir);
    defer(pty.close);
    const board = await fakeBoard(pty.boardPath, '2.1.0', 'TESTBOARD7');
    defer(board.close);
    {
      const setup = writeSetup(tmp.dir, { gateway: gateway.url, port: pty.agentPath });
      const run = await runCli(['doctor', '--json', '--config', setup.configPath]);
      const report = parse(run);
      const r = byId(report);
      assert.deepEqual(
        report.results.map((x) => x.id),
        [
          'config',
          'secret-token',
          'start-endpoint',
          'serial',
          'board',
          'reader',
          'vmc',
          'gateway',
          'clock',
          'disk',
          'ledger',
          'outbox',
          'display',
          'gpio',
          'fleet-trust',
        ],
      );
      for (const id of [
        'config',
        'secret-token',
        'start-endpoint',
        'serial',
        'board',
        'vmc',
        'gateway',
        'clock',
        'ledger',
        'outbox',
        'display',
      ]) {
        assert.equal(r[id]?.status, 'OK', `${id}: ${r[id]?.summary}`);
      }
      assert.equal(r.board?.details?.firmware, '2.1.0');
      assert.equal(r.board?.details?.boardId, 'TESTBOARD7');
      assert.equal(r['secret-token']?.details?.lengthValid, true);
      assert.equal(r.ledger?.details?.integrity, 'ok');
      assert.equal(r.outbox?.details?.pending, 0);
      assert.equal(typeof r.gateway?.details?.httpStatus, 'number');
      // No systemd-managed daemon here: the reader state can only be a warning, never a failure.
      assert.notEqual(r.reader?.status, 'FAIL');
      assert.notEqual(r.disk?.status, 'FAIL', r.disk?.summary);
      assert.equal(report.counts.FAIL, 0);
      assert.equal(report.ok, true);
      assert.equal(run.code, 0);
    }
  },
);

test(
  'broken setup: missing serial device, unreachable gateway, corrupted ledger, exit code 1',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const tmp = tempDir('qrvend-doctor-broken-');
    try {
      const port = await closedPort();
      const setup = writeSetup(tmp.dir, {
        gateway: `http://127.0.0.1:${port}`,
        port: join(tmp.dir, 'no-such-tty'),
        ledger: 'none',
      });
      // A file full of garbage where the ledger should be.
      mkdirSync(join(tmp.dir, 'state'), { recursive: true });
      writeFileSync(setup.ledgerPath, Buffer.from('this is not an SQLite database, just garbage bytes\n'.repeat(200)));

      const run = await runCli(['doctor', '--json', '--config', setup.configPath]);
      const r = byId(parse(run));
      assert.equal(r.serial?.status, 'FAIL');
      assert.match(r.serial?.summary ?? '', /does not exist/);
      assert.ok(r.serial?.action, 'a failure must say what to do');
      assert.equal(r.board?.status, 'WARN');
      assert.equal(r.board?.details?.skipped, true);
      assert.equal(r.gateway?.status, 'FAIL');
      assert.equal(r.gateway?.details?.error, 'ECONNREFUSED');
      assert.match(r.gateway?.action ?? '', /gateway\.baseUrl/);
      assert.equal(r.ledger?.status, 'FAIL');
      assert.ok(r.ledger?.action);
      assert.equal(r.outbox?.status, 'WARN');
      // What still works is still reported as working.
      assert.equal(r.config?.status, 'OK');
      assert.equal(r['secret-token']?.status, 'OK');
      assert.equal(run.code, 1);
    } finally {
      tmp.cleanup();
    }
  },
);

test(
  'a port held by the running daemon: WARN "daemon running, board check skipped", no fight for the port',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const defer = teardown(t);
    const tmp = tempDir('qrvend-doctor-busy-');
    defer(tmp.cleanup);
    const gateway = await startGatewaySimulator();
    defer(() => gateway.close());
    const pty = await ptyPair(tmp.dir);
    defer(pty.close);
    const daemon = await holdPort(pty.agentPath);
    defer(daemon.close);
    {
      const setup = writeSetup(tmp.dir, { gateway: gateway.url, port: pty.agentPath });
      const run = await runCli(['doctor', '--json', '--config', setup.configPath]);
      const r = byId(parse(run));
      assert.equal(r.serial?.status, 'WARN');
      assert.equal(r.serial?.details?.busy, true);
      assert.equal(r.board?.status, 'WARN');
      assert.match(r.board?.summary ?? '', /daemon running, board check skipped/);
      assert.equal(run.code, 0);
    }
  },
);

test('a board that never answers fails the board check', { timeout: TEST_DEADLINE_MS }, async (t) => {
  const defer = teardown(t);
  const tmp = tempDir('qrvend-doctor-silent-');
  defer(tmp.cleanup);
  const gateway = await startGatewaySimulator();
  defer(() => gateway.close());
  const pty = await ptyPair(tmp.dir);
  defer(pty.close);
  {
    const setup = writeSetup(tmp.dir, { gateway: gateway.url, port: pty.agentPath });
    const run = await runCli(['doctor', '--json', '--config', setup.configPath]);
    const r = byId(parse(run));
    assert.equal(r.serial?.status, 'OK');
    assert.equal(r.board?.status, 'FAIL');
    assert.match(r.board?.action ?? '', /baudRate/);
    assert.equal(run.code, 1);
  }
});

test(
  'secret token file: world-readable or wrong length fails, and the content is never shown',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const tmp = tempDir('qrvend-doctor-token-');
    try {
      const setup = writeSetup(tmp.dir, { gateway: 'http://127.0.0.1:9', port: 'sim' });
      chmodSync(setup.tokenPath, 0o644);
      let r = byId(parse(await runCli(['doctor', '--json', '--config', setup.configPath])));
      assert.equal(r['secret-token']?.status, 'FAIL');
      assert.match(r['secret-token']?.action ?? '', /chmod 0640/);

      chmodSync(setup.tokenPath, 0o640);
      writeFileSync(setup.tokenPath, TOKEN.slice(0, 40));
      r = byId(parse(await runCli(['doctor', '--json', '--config', setup.configPath])));
      assert.equal(r['secret-token']?.status, 'FAIL');
      assert.equal(r['secret-token']?.details?.lengthValid, false);
      // The text report must not leak the partial token either.
      const text = await runCli(['doctor', '--config', setup.configPath]);
      assert.equal(text.stdout.includes(TOKEN.slice(0, 40)), false);
      assert.match(text.stdout, /FAIL\s+Start secret token file/);
    } finally {
      tmp.cleanup();
    }
  },
);

test(
  'mdb.port=sim skips the serial hardware; an invalid config fails and skips the rest',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const tmp = tempDir('qrvend-doctor-config-');
    try {
      const setup = writeSetup(tmp.dir, { gateway: 'http://127.0.0.1:9', port: 'sim' });
      let r = byId(parse(await runCli(['doctor', '--json', '--config', setup.configPath])));
      assert.equal(r.serial?.status, 'OK');
      assert.equal(r.board?.status, 'OK');

      writeFileSync(setup.configPath, JSON.stringify({ mdb: { port: 'sim', baudRat: 9600 } }));
      const run = await runCli(['doctor', '--json', '--config', setup.configPath]);
      const report = parse(run);
      r = byId(report);
      assert.equal(r.config?.status, 'FAIL');
      assert.deepEqual(r.config?.details?.problems, [{ path: 'mdb.baudRat', reason: 'unknown key' }]);
      for (const other of report.results.filter((x) => x.id !== 'config')) {
        assert.equal(other.status, 'WARN', `${other.id} should be skipped`);
      }
      assert.equal(run.code, 1);
    } finally {
      tmp.cleanup();
    }
  },
);
