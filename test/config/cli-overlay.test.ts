/**
 * `qrvend config check` shows the layers and the overlay's problems; `qrvend
 * config reset-remote` drops the overlay, keeping a copy.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../support/deadlines.js';

const MAIN_JS = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const T = { timeout: TEST_DEADLINE_MS };

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN_JS, ...args],
      { timeout: CHILD_DEADLINE_MS, env: { ...process.env, QRVEND_CONFIG: '' } },
      (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
      },
    );
  });
}

function machine(): { dir: string; site: string; overlay: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-config-cli-'));
  const token = join(dir, 'secret-token');
  writeFileSync(token, 'x'.repeat(32), { mode: 0o600 });
  const overlay = join(dir, 'state', 'fleet-config.json');
  mkdirSync(join(dir, 'state'));
  const site = join(dir, 'config.json');
  writeFileSync(
    site,
    JSON.stringify({
      start: { secretTokenFile: token },
      store: { path: join(dir, 'ledger.sqlite') },
      fleet: { configOverlay: overlay },
    }),
  );
  return { dir, site, overlay, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('config check lists the layers applied and the keys the overlay sets', T, async () => {
  const m = machine();
  try {
    writeFileSync(m.overlay, JSON.stringify({ mdb: { sessionIdleTimeoutMs: 45_000 } }));
    const r = await cli(['config', 'check', m.site]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /defaults\s+applied/);
    assert.match(r.stdout, new RegExp(`site\\s+applied\\s+${m.site}`));
    assert.match(r.stdout, new RegExp(`fleet overlay\\s+applied\\s+${m.overlay}`));
    assert.match(r.stdout, /fleet overlay sets: mdb/);
    const json = JSON.parse((await cli(['config', 'check', '--json', m.site])).stdout) as {
      layers: Array<{ name: string; status: string }>;
      overlay: { set: unknown };
    };
    assert.deepEqual(
      json.layers.map((l) => `${l.name}:${l.status}`),
      ['defaults:applied', 'site:applied', 'fleet overlay:applied'],
    );
    assert.deepEqual(json.overlay.set, { mdb: { sessionIdleTimeoutMs: 45_000 } });
  } finally {
    m.cleanup();
  }
});

test(
  "config check names an invalid overlay's key path, still passes on the site file, and moves nothing",
  T,
  async () => {
    const m = machine();
    try {
      writeFileSync(m.overlay, JSON.stringify({ gateway: { timeoutMs: -1 } }));
      const r = await cli(['config', 'check', m.site]);
      assert.equal(r.code, 0, 'the daemon would start (on the site file)');
      assert.match(r.stdout, /fleet overlay\s+rejected/);
      assert.match(r.stdout, /fleet overlay problem: gateway\.timeoutMs/);
      assert.match(r.stderr, /CONFIG_OVERLAY_REJECTED/);
      assert.ok(existsSync(m.overlay), 'a check changes nothing');
    } finally {
      m.cleanup();
    }
  },
);

test('config reset-remote removes the overlay, keeps a copy, and the next check shows it absent', T, async () => {
  const m = machine();
  try {
    const text = JSON.stringify({ mdb: { sessionIdleTimeoutMs: 45_000 } });
    writeFileSync(m.overlay, text);
    writeFileSync(`${m.overlay}.rolled-back.json`, '{"at":"x","reason":"y"}');
    const r = await cli(['config', 'reset-remote', m.site]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /removed; a copy is at /);
    assert.equal(existsSync(m.overlay), false);
    assert.equal(existsSync(`${m.overlay}.rolled-back.json`), false, 'the rollback alarm mark goes too');
    const copies = readdirSync(join(m.dir, 'state')).filter((f) => f.startsWith('fleet-config.json.removed-'));
    assert.equal(copies.length, 1);
    assert.equal(readFileSync(join(m.dir, 'state', copies[0]!), 'utf8'), text);
    assert.match((await cli(['config', 'check', m.site])).stdout, /fleet overlay\s+absent/);
    assert.match((await cli(['config', 'reset-remote', m.site])).stdout, /nothing to drop/);
  } finally {
    m.cleanup();
  }
});

test(
  "doctor's config check warns about a rejected overlay with its key path, and names an applied one",
  T,
  async () => {
    const m = machine();
    try {
      writeFileSync(m.overlay, JSON.stringify({ mdb: { sessionIdleTimeotMs: 1 } }));
      const configResult = async () => {
        const r = await cli(['doctor', '--json', '--config', m.site]);
        return (
          JSON.parse(r.stdout) as { results: Array<{ id: string; status: string; summary: string }> }
        ).results.find((c) => c.id === 'config')!;
      };
      const rejected = await configResult();
      assert.equal(rejected.status, 'WARN');
      assert.match(rejected.summary, /CONFIG_OVERLAY_REJECTED.*mdb\.sessionIdleTimeotMs: unknown key/);
      writeFileSync(m.overlay, JSON.stringify({ mdb: { sessionIdleTimeoutMs: 45_000 } }));
      const applied = await configResult();
      assert.equal(applied.status, 'OK');
      assert.match(applied.summary, /with the fleet overlay .* over it: mdb/);
    } finally {
      m.cleanup();
    }
  },
);

test(
  'outbox runs on the effective config: an overlay that moves the ' +
    'store is rejected and named on stderr (docs/decisions/fleet-trust.md item 3c)',
  T,
  async () => {
    const m = machine();
    try {
      const moved = join(m.dir, 'state', 'moved.sqlite');
      writeFileSync(m.overlay, JSON.stringify({ store: { path: moved } }));
      const rejected = await cli(['outbox', '--config', m.site]);
      assert.match(rejected.stderr, /warning: CONFIG_OVERLAY_REJECTED: .* store\.path: not settable from the fleet/);
      assert.match(rejected.stderr, new RegExp(`LEDGER_NOT_FOUND: no ledger at ${join(m.dir, 'ledger.sqlite')}`));
      writeFileSync(m.overlay, JSON.stringify({ store: { path: 'relative.sqlite' } }));
      const invalid = await cli(['outbox', '--config', m.site]);
      assert.match(invalid.stderr, /warning: CONFIG_OVERLAY_REJECTED: .* store\.path: must be an absolute path/);
    } finally {
      m.cleanup();
    }
  },
);
