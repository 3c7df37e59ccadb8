/**
 * The technician's commands as child processes: `qrvend dex read` against the simulated VMC on a
 * pty, and `qrvend sim dex` read by the link.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../../src/core/log.js';
import { openDexLink } from '../../../src/dex/link/index.js';
import { startDexSim } from '../../../src/sim/dex/vmc.js';
import { createPtyPair } from '../../support/pty.js';
import { runCli, startCli } from '../../fleet/operator/run-cli.js';
import { auditFile } from './support.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

function siteConfig(dir: string): string {
  const path = join(dir, 'site.json');
  writeFileSync(path, JSON.stringify({ store: { path: join(dir, 'ledger.sqlite') }, dex: { protocol: 'auto' } }), {
    mode: 0o600,
  });
  return path;
}

test(
  'qrvend dex read: detects DDCMP, writes the raw file, prints ' +
    'protocol and size, remembers the protocol beside the ledger',
  T,
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-dexcli-'));
    const pty = await createPtyPair();
    const file = auditFile('CLI');
    const sim = await startDexSim({ path: pty.vmcPath, protocol: 'ddcmp', files: [file], behaviour: 'normal' });
    try {
      const out = join(dir, 'audit.txt');
      const r = await runCli(
        ['dex', 'read', '--config', siteConfig(dir), '--port', pty.agentPath, '--out', out],
        60_000,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`read ${file.length} bytes over DDCMP`));
      assert.deepEqual(readFileSync(out), file);
      assert.equal(JSON.parse(readFileSync(join(dir, 'dex-facts.json'), 'utf8')).protocol, 'ddcmp');
    } finally {
      await sim.close();
      await pty.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'qrvend dex read: a VMC that never answers exits non-zero with DEX_NO_ANSWER and what to check; no file written',
  T,
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-dexcli-'));
    const pty = await createPtyPair();
    const sim = await startDexSim({
      path: pty.vmcPath,
      protocol: 'dex-ucs',
      files: [auditFile('X')],
      behaviour: 'silent',
    });
    try {
      const out = join(dir, 'audit.txt');
      const r = await runCli(
        ['dex', 'read', '--config', siteConfig(dir), '--port', pty.agentPath, '--out', out],
        60_000,
      );
      assert.equal(r.code, 1);
      assert.match(r.stderr, /DEX_NO_ANSWER/);
      assert.match(r.stderr, /DEX jack/);
      assert.equal(existsSync(out), false);
    } finally {
      await sim.close();
      await pty.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('qrvend dex read: a port path that is not a plain device path is refused before anything opens', T, async () => {
  const r = await runCli(['dex', 'read', '--port', '/dev/tty;rm -rf x', '--protocol', 'dex-ucs'], 30_000);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /--port must be an absolute device path/);
});

test('qrvend sim dex: makes its pty pair and serves the files in turn to the link', T, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-dexsim-'));
  const files = [auditFile('ONE'), auditFile('TWO')];
  files.forEach((f, i) => writeFileSync(join(dir, `f${i}.txt`), f));
  const agent = join(dir, 'agent');
  const cli = startCli([
    'sim',
    'dex',
    '--agent-pty',
    agent,
    '--pty',
    join(dir, 'vmc'),
    '--protocol',
    'dex-ucs',
    join(dir, 'f0.txt'),
    join(dir, 'f1.txt'),
  ]);
  try {
    while (!cli.out().includes('# DEX VMC')) {
      assert.equal(cli.child.exitCode, null, cli.err());
      await new Promise((r) => setTimeout(r, 50));
    }
    const link = openDexLink({
      port: agent,
      protocol: 'dex-ucs',
      factsPath: join(dir, 'facts.json'),
      maxFileBytes: 65536,
      log: silentLogger(),
    });
    assert.deepEqual((await link.read()).bytes, files[0]);
    assert.deepEqual((await link.read()).bytes, files[1]);
    assert.deepEqual((await link.read()).bytes, files[1]);
  } finally {
    cli.child.kill('SIGTERM');
    await cli.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});
