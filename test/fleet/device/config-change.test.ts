/** config.set's file work: validation naming the key path, the trial markers, rollback and confirmation. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import {
  applyConfigSet,
  checkConfigSet,
  confirmChange,
  pendingFile,
  previousFile,
  readPendingChange,
  readRolledBack,
  rollBack,
} from '../../../src/fleet/device/config-change.js';
import { ConfigSchema, isAllowedFleetUrl } from '../../../src/config/schema.js';
import { loadConfig } from '../../../src/config/load.js';

const T = { timeout: 5_000 };

function siteFile(): { file: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-config-set-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, `${JSON.stringify({ mdb: { port: 'sim' }, log: { level: 'warn' } }, null, 2)}\n`);
  return { file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('a change the schema refuses names every key path; the file is untouched', T, () => {
  const site = siteFile();
  try {
    const before = readFileSync(site.file, 'utf8');
    const r = checkConfigSet(site.file, { gateway: { timeoutMs: -1 }, fleet: { url: 'mqtt://broker.example.com' } });
    assert.equal(r.ok, false);
    assert.deepEqual(!r.ok && r.paths.sort(), ['fleet.url', 'gateway.timeoutMs']);
    assert.equal(readFileSync(site.file, 'utf8'), before);
  } finally {
    site.cleanup();
  }
});

test('a good change is layered over the site file; the trial passes and keeps it', T, () => {
  const site = siteFile();
  try {
    const r = checkConfigSet(site.file, { mdb: { sessionIdleTimeoutMs: 30_000 } });
    assert.ok(r.ok);
    applyConfigSet(site.file, r.siteText, 20, new Date(0));
    assert.equal(loadConfig({ file: site.file }).config.mdb.sessionIdleTimeoutMs, 30_000);
    assert.equal(loadConfig({ file: site.file }).config.log.level, 'warn', 'the rest of the site file is kept');
    assert.equal(readPendingChange(site.file)?.healthyWithinS, 20);
    confirmChange(site.file);
    assert.equal(readPendingChange(site.file), null);
    assert.equal(existsSync(previousFile(site.file)), false);
  } finally {
    site.cleanup();
  }
});

test('a failed trial restores the previous file byte for byte and leaves the rolled-back mark', T, () => {
  const site = siteFile();
  try {
    const before = readFileSync(site.file, 'utf8');
    const r = checkConfigSet(site.file, { mdb: { port: '/dev/ttyNOPE' } });
    assert.ok(r.ok);
    applyConfigSet(site.file, r.siteText, 5, new Date(0));
    assert.ok(rollBack(site.file, 'not healthy within 5 s', new Date(0)));
    assert.equal(readFileSync(site.file, 'utf8'), before);
    assert.equal(existsSync(pendingFile(site.file)), false);
    assert.equal(readRolledBack(site.file)?.reason, 'not healthy within 5 s');
    confirmChange(site.file);
    assert.equal(readRolledBack(site.file), null, 'the next good change clears the mark');
  } finally {
    site.cleanup();
  }
});

test('fleet.url: TLS schemes anywhere, plain MQTT and WebSocket to loopback only; certFile with keyFile', T, () => {
  assert.ok(isAllowedFleetUrl('mqtts://broker.example.com:8883'));
  assert.ok(isAllowedFleetUrl('wss://broker.example.com/mqtt'));
  assert.ok(isAllowedFleetUrl('mqtt://127.0.0.1:1883'));
  assert.ok(isAllowedFleetUrl('ws://localhost:9001'));
  assert.ok(!isAllowedFleetUrl('mqtt://broker.example.com:1883'));
  assert.ok(!isAllowedFleetUrl('http://127.0.0.1'));
  const base = loadConfig().config;
  const parsed = ConfigSchema.safeParse({ ...base, fleet: { ...base.fleet, url: 'mqtts://b.example.com', certFile: '/etc/qrvend/c.pem' } });
  assert.equal(parsed.success, false);
  assert.deepEqual(!parsed.success && parsed.error.issues.map((i) => i.path.join('.')), ['fleet.keyFile']);
  assert.equal(base.fleet.url, null, 'off by default');
});
