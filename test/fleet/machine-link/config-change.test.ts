/**
 * config.set's file work: the change goes into the fleet overlay in the state directory, never
 * into the site file; validation names the key path; the trial marks, rollback and confirmation
 * live beside the overlay; a technician's reset keeps a copy.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import {
  applyConfigSet,
  confirmChange,
  pendingFile,
  previousOverlayFile,
  readPendingChange,
  readRolledBack,
  resetRemote,
  rollBack,
  settleRejectedOverlay,
  trialRunFile,
} from '../../../src/fleet/machine-link/config-change.js';
import { checkConfigSet } from '../../../src/fleet/machine-link/config-set-check.js';
import { ConfigSchema, isAllowedFleetUrl } from '../../../src/config/schema.js';
import { loadConfig } from '../../../src/config/load.js';

const T = { timeout: 5_000 };

interface Machine {
  /** The site file, in its own directory (stands for /etc/qrvend). */
  site: string;
  siteDir: string;
  /** The overlay, in the state directory (stands for /var/lib/qrvend; not created yet). */
  overlay: string;
  cleanup(): void;
}

function machine(): Machine {
  const root = mkdtempSync(join(tmpdir(), 'qrvend-config-set-'));
  const siteDir = join(root, 'etc');
  mkdirSync(siteDir);
  const overlay = join(root, 'state', 'fleet-config.json');
  const site = join(siteDir, 'config.json');
  // A change is checked against what the next start needs: the SecretToken file among it.
  const token = join(root, 'secret-token');
  writeFileSync(token, `${'t'.repeat(64)}\n`, { mode: 0o600 });
  const siteConfig = {
    mdb: { port: 'sim' },
    log: { level: 'warn' },
    start: { secretTokenFile: token },
    fleet: { configOverlay: overlay },
  };
  writeFileSync(site, `${JSON.stringify(siteConfig, null, 2)}\n`);
  return {
    site,
    siteDir,
    overlay,
    cleanup: () => {
      chmodSync(siteDir, 0o755);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

function set(m: Machine, change: Record<string, unknown>, healthyWithinS = 20): void {
  const r = checkConfigSet(m.site, m.overlay, change);
  assert.ok(r.ok, JSON.stringify(r));
  applyConfigSet(m.overlay, r.overlayText, healthyWithinS, new Date(0));
}

test('a change the schema refuses names every key path; neither the site file nor the overlay is written', T, () => {
  const m = machine();
  try {
    const before = readFileSync(m.site, 'utf8');
    const r = checkConfigSet(m.site, m.overlay, { mdb: { sessionIdleTimeoutMs: -1 }, display: { rotate: 45 } });
    assert.equal(r.ok, false);
    assert.deepEqual(!r.ok && r.paths.sort(), ['display.rotate', 'mdb.sessionIdleTimeoutMs']);
    assert.equal(readFileSync(m.site, 'utf8'), before);
    assert.equal(existsSync(m.overlay), false);
  } finally {
    m.cleanup();
  }
});

test(
  "a change the next start would refuse (the daemon's start checks) is CONFIG_INVALID naming the key; nothing written",
  T,
  () => {
    const m = machine();
    try {
      // No key the fleet may set can fail the start checks (the allowlist answers BAD_ARGS first),
      // but the machine under the change can: here its SecretToken file has gone since it started,
      // so a restart for any change would leave it off.
      const site = JSON.parse(readFileSync(m.site, 'utf8')) as { start: { secretTokenFile: string } };
      site.start.secretTokenFile = '/nonexistent';
      writeFileSync(m.site, JSON.stringify(site));
      const r = checkConfigSet(m.site, m.overlay, { mdb: { sessionIdleTimeoutMs: 30_000 } });
      assert.equal(!r.ok && r.code, 'CONFIG_INVALID');
      assert.deepEqual(!r.ok && r.paths, ['start.secretTokenFile']);
      assert.match(
        !r.ok ? r.message : '',
        new RegExp(
          /^the agent would not start on it: start\.secretTokenFile: /.source +
            /Start SecretToken file \/nonexistent: file not found$/.source,
        ),
      );
      assert.equal(existsSync(m.overlay), false);
      assert.equal(existsSync(pendingFile(m.overlay)), false);
    } finally {
      m.cleanup();
    }
  },
);

test(
  'a change while another is on trial is BUSY (a rollback would ' +
    'restore the unconfirmed one); accepted again once confirmed',
  T,
  () => {
    const m = machine();
    try {
      set(m, { mdb: { sessionIdleTimeoutMs: 30_000 } });
      const overlay = readFileSync(m.overlay);
      const previous = existsSync(previousOverlayFile(m.overlay));
      const r = checkConfigSet(m.site, m.overlay, { dynamicQr: { pollIntervalMs: 3_000 } });
      assert.equal(!r.ok && r.code, 'BUSY');
      assert.deepEqual(readFileSync(m.overlay), overlay);
      assert.equal(existsSync(previousOverlayFile(m.overlay)), previous);
      confirmChange(m.overlay);
      set(m, { dynamicQr: { pollIntervalMs: 3_000 } });
    } finally {
      m.cleanup();
    }
  },
);

test(
  "the trial count of the unit's script goes with the trial: at confirmation, rollback, reset, and a new change",
  T,
  () => {
    const m = machine();
    const counted = () => writeFileSync(trialRunFile(m.overlay), '2\n');
    try {
      set(m, { mdb: { sessionIdleTimeoutMs: 30_000 } });
      counted();
      confirmChange(m.overlay);
      assert.equal(existsSync(trialRunFile(m.overlay)), false, 'confirmed');
      set(m, { mdb: { sessionIdleTimeoutMs: 31_000 } });
      counted();
      rollBack(m.overlay, 'not healthy', new Date(0));
      assert.equal(existsSync(trialRunFile(m.overlay)), false, 'rolled back');
      counted(); // left over by a cut between the script's removals
      set(m, { mdb: { sessionIdleTimeoutMs: 32_000 } });
      assert.equal(existsSync(trialRunFile(m.overlay)), false, 'a new change starts its own count');
      counted();
      resetRemote(m.overlay, new Date(0));
      assert.equal(existsSync(trialRunFile(m.overlay)), false, 'reset');
    } finally {
      m.cleanup();
    }
  },
);

test('fleet.configOverlay cannot be set from the fleet: BAD_ARGS naming it', T, () => {
  const m = machine();
  try {
    const r = checkConfigSet(m.site, m.overlay, { fleet: { configOverlay: '/etc/qrvend/config.json' } });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.code, 'BAD_ARGS');
    assert.match(!r.ok ? r.message : '', /fleet\.configOverlay/);
  } finally {
    m.cleanup();
  }
});

test('a good change lands in the overlay only; the site file is byte for byte untouched; changes accumulate', T, () => {
  const m = machine();
  try {
    const before = readFileSync(m.site);
    const mtime = statSync(m.site).mtimeMs;
    set(m, { mdb: { sessionIdleTimeoutMs: 30_000 } });
    confirmChange(m.overlay);
    set(m, { dynamicQr: { pollIntervalMs: 3_000 } });
    assert.deepEqual(readFileSync(m.site), before);
    assert.equal(statSync(m.site).mtimeMs, mtime);
    assert.deepEqual(readdirSync(m.siteDir), ['config.json'], 'no marker beside the site file');
    assert.deepEqual(
      JSON.parse(readFileSync(m.overlay, 'utf8')),
      { mdb: { sessionIdleTimeoutMs: 30_000 }, dynamicQr: { pollIntervalMs: 3_000 } },
      'the overlay holds only what the fleet set',
    );
    const loaded = loadConfig({ file: m.site, env: {} });
    assert.equal(loaded.config.mdb.sessionIdleTimeoutMs, 30_000);
    assert.equal(loaded.config.dynamicQr.pollIntervalMs, 3_000);
    assert.equal(loaded.config.log.level, 'warn', 'the site file still applies under the overlay');
    assert.equal(loaded.overlay.status, 'applied');
  } finally {
    m.cleanup();
  }
});

test('a read-only site file in a read-only directory does not stop config.set', T, () => {
  const m = machine();
  try {
    chmodSync(m.site, 0o444);
    chmodSync(m.siteDir, 0o555);
    const before = readFileSync(m.site);
    set(m, { mdb: { sessionIdleTimeoutMs: 40_000 } });
    assert.deepEqual(readFileSync(m.site), before);
    assert.deepEqual(readdirSync(m.siteDir), ['config.json']);
    assert.equal(loadConfig({ file: m.site, env: {} }).config.mdb.sessionIdleTimeoutMs, 40_000);
  } finally {
    m.cleanup();
  }
});

test('the trial passes and keeps the change; its marks live beside the overlay and then go', T, () => {
  const m = machine();
  try {
    set(m, { mdb: { sessionIdleTimeoutMs: 30_000 } }, 20);
    assert.equal(readPendingChange(m.overlay)?.healthyWithinS, 20);
    assert.ok(existsSync(pendingFile(m.overlay)));
    confirmChange(m.overlay);
    assert.equal(readPendingChange(m.overlay), null);
    assert.equal(existsSync(previousOverlayFile(m.overlay)), false);
    assert.equal(loadConfig({ file: m.site, env: {} }).config.mdb.sessionIdleTimeoutMs, 30_000);
  } finally {
    m.cleanup();
  }
});

test('a failed trial restores the previous overlay byte for byte and leaves the rolled-back mark', T, () => {
  const m = machine();
  try {
    set(m, { mdb: { sessionIdleTimeoutMs: 30_000 } });
    confirmChange(m.overlay);
    const before = readFileSync(m.overlay, 'utf8');
    set(m, { mdb: { linkWatchdogMs: 500 } }, 5);
    assert.ok(rollBack(m.overlay, 'not healthy within 5 s', new Date(0)));
    assert.equal(readFileSync(m.overlay, 'utf8'), before);
    assert.equal(existsSync(pendingFile(m.overlay)), false);
    assert.equal(readRolledBack(m.overlay)?.reason, 'not healthy within 5 s');
    confirmChange(m.overlay);
    assert.equal(readRolledBack(m.overlay), null, 'the next good change clears the mark');
  } finally {
    m.cleanup();
  }
});

test('a failed first change removes the overlay: back to the site file and the defaults', T, () => {
  const m = machine();
  try {
    set(m, { mdb: { linkWatchdogMs: 500 } }, 5);
    assert.ok(rollBack(m.overlay, 'not healthy within 5 s', new Date(0)));
    assert.equal(existsSync(m.overlay), false);
    const loaded = loadConfig({ file: m.site, env: {} });
    assert.equal(loaded.config.mdb.port, 'sim');
    assert.equal(loaded.overlay.status, 'absent');
    assert.equal(rollBack(m.overlay, 'again', new Date(0)), false, 'no trial, nothing to roll back');
  } finally {
    m.cleanup();
  }
});

test(
  'a rejected overlay in a trial brings the previous one back; outside a trial, none; both leave the alarm mark',
  T,
  () => {
    const m = machine();
    try {
      set(m, { mdb: { sessionIdleTimeoutMs: 30_000 } });
      confirmChange(m.overlay);
      const good = readFileSync(m.overlay, 'utf8');
      set(m, { mdb: { sessionIdleTimeoutMs: 31_000 } });
      const aside = loadConfig({ file: m.site, env: {}, setRejectedOverlayAside: true });
      assert.equal(aside.overlay.status, 'applied', 'valid: nothing to settle');
      writeFileSync(m.overlay, '{"mdb": ');
      const loaded = loadConfig({ file: m.site, env: {}, setRejectedOverlayAside: true });
      assert.equal(loaded.overlay.status, 'rejected');
      assert.equal(settleRejectedOverlay(m.overlay, 'damaged', new Date(0)), 'previous restored');
      assert.equal(readFileSync(m.overlay, 'utf8'), good);
      assert.equal(readPendingChange(m.overlay), null, 'the trial is over');
      assert.equal(readRolledBack(m.overlay)?.reason, 'damaged');
      confirmChange(m.overlay);
      writeFileSync(m.overlay, '[]');
      loadConfig({ file: m.site, env: {}, setRejectedOverlayAside: true });
      assert.equal(settleRejectedOverlay(m.overlay, 'not an object', new Date(0)), 'none');
      assert.equal(existsSync(m.overlay), false);
      assert.equal(readRolledBack(m.overlay)?.reason, 'not an object');
    } finally {
      m.cleanup();
    }
  },
);

test('reset-remote removes the overlay and its marks, keeping a copy', T, () => {
  const m = machine();
  try {
    set(m, { mdb: { sessionIdleTimeoutMs: 30_000 } });
    const text = readFileSync(m.overlay, 'utf8');
    const copy = resetRemote(m.overlay, new Date(Date.UTC(2026, 10, 23, 4, 30, 0)));
    assert.equal(copy, `${m.overlay}.removed-20261123T043000Z`);
    assert.equal(readFileSync(copy!, 'utf8'), text);
    assert.equal(existsSync(m.overlay), false);
    assert.equal(existsSync(pendingFile(m.overlay)), false);
    assert.equal(existsSync(previousOverlayFile(m.overlay)), false);
    assert.equal(
      loadConfig({ file: m.site, env: {} }).config.mdb.sessionIdleTimeoutMs,
      loadConfig({ env: {} }).config.mdb.sessionIdleTimeoutMs,
      'back to the default',
    );
    assert.equal(resetRemote(m.overlay, new Date(0)), null, 'nothing left to drop');
  } finally {
    m.cleanup();
  }
});

test('fleet.url: TLS schemes anywhere, plain MQTT and WebSocket to loopback only; certFile with keyFile', T, () => {
  assert.ok(isAllowedFleetUrl('mqtts://broker.example.com:8883'));
  assert.ok(isAllowedFleetUrl('wss://broker.example.com/mqtt'));
  assert.ok(isAllowedFleetUrl('mqtt://127.0.0.1:1883'));
  assert.ok(isAllowedFleetUrl('ws://localhost:9001'));
  assert.ok(!isAllowedFleetUrl('mqtt://broker.example.com:1883'));
  assert.ok(!isAllowedFleetUrl('http://127.0.0.1'));
  const base = loadConfig({ env: {} }).config;
  const parsed = ConfigSchema.safeParse({
    ...base,
    fleet: { ...base.fleet, url: 'mqtts://b.example.com', certFile: '/etc/qrvend/c.pem' },
  });
  assert.equal(parsed.success, false);
  assert.deepEqual(!parsed.success && parsed.error.issues.map((i) => i.path.join('.')), ['fleet.keyFile']);
  assert.equal(base.fleet.url, null, 'off by default');
  assert.equal(base.fleet.configOverlay, '/var/lib/qrvend/fleet-config.json');
});

test('config.get shows no path and no broker credential', T, async () => {
  const { redactConfig, REDACTED } = await import('../../../src/fleet/machine-link/local-commands.js');
  const shown = redactConfig({
    start: { secretTokenFile: '/etc/qrvend/secret-token', certFile: null, listen: '127.0.0.1:8080' },
    fleet: {
      url: 'mqtts://dev:hunter2@broker:8883',
      passwordFile: '/etc/qrvend/pw',
      configOverlay: '/var/lib/qrvend/fleet-config.json',
      trustFile: '/etc/qrvend/fleet-trust.json',
    },
    store: { path: '/var/lib/qrvend/ledger.sqlite' },
    display: { png: '/tmp/x.png', logo: null },
    mdb: { sessionIdleTimeoutMs: 30_000 },
  }) as Record<string, Record<string, unknown>>;
  assert.deepEqual(shown.start, { secretTokenFile: REDACTED, certFile: null, listen: '127.0.0.1:8080' });
  assert.deepEqual(shown.fleet, {
    url: 'mqtts://broker:8883',
    passwordFile: REDACTED,
    configOverlay: REDACTED,
    trustFile: REDACTED,
  });
  assert.deepEqual(shown.store, { path: REDACTED });
  assert.deepEqual(shown.display, { png: REDACTED, logo: null });
  assert.ok(!JSON.stringify(shown).includes('hunter2'));
});
